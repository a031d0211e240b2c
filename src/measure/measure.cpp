#include "measure/measure.hpp"

#include "decide/check.hpp"
#include "measure/build.hpp"
#include "measure/device.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace kopt::measure {

namespace fs = std::filesystem;

namespace {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Whether an ok measurement of `id`'s current content exists that is newer than its harness
// binary.
bool measured_since_built(const LoadedFamily &loaded, const std::string &id) {
  fs::path file = loaded.layout.measurement(id);
  fs::path harness = loaded.layout.harness(id);
  std::error_code ec;
  if (!fs::exists(file, ec) || !fs::exists(harness, ec) ||
      fs::last_write_time(file, ec) < fs::last_write_time(harness, ec)) {
    return false;
  }
  try {
    profile::Measurement m = profile::read_measurement(file);
    return m.ok() && m.hash == loaded.candidates.content_hash(loaded.family, id);
  } catch (const Error &) {
    return false; // the measurement that follows replaces it
  }
}

// The identity check of the candidate's build (the baseline's and BEST's are the caller's to
// leave out): a Failure when its build is not provably its own code.
std::optional<Failure> identity_failure(const LoadedFamily &loaded, const Request &request) {
  if (request.identity_dir.empty() || (request.reuse && measured_since_built(loaded, request.id))) {
    return std::nullopt;
  }
  util::RealProcessRunner runner;
  std::vector<std::string> problems =
      decide::identity_problems(loaded.family, loaded.candidates, loaded.layout, request.id,
                                loaded.baseline(), request.identity_dir, request.prefix, runner);
  if (problems.empty()) {
    return std::nullopt;
  }
  return Failure{"identity", "identity: " + util::join(problems, "; "), ""};
}

// Holds the device as the request says, noting when.
void hold(const LoadedFamily &loaded, const Request &request, std::ostream &progress,
          Prepared &out) {
  if (request.hold == Hold::claim) {
    out.held = claim_device(loaded, request.gpu_wait_min, progress);
  } else {
    out.held.binding = bind_device(loaded, request.gpu_wait_min);
  }
  out.from = unix_now();
}

} // namespace

std::string Failure::recorded() const {
  return step == "build" ? reason + ": " + first_error(output) : reason;
}

std::vector<std::string> targets(const LoadedFamily &loaded, const Request &request) {
  std::vector<std::string> out;
  for (const std::string &id : {loaded.baseline(), request.id, request.best.id}) {
    std::string target = request.prefix + "candidate_" + id;
    if (std::find(out.begin(), out.end(), target) == out.end()) {
      out.push_back(target);
    }
  }
  return out;
}

// A host family's claim covers its build too: a compile on the same cores would distort another
// benchmark. The identity check needs no device: a refused candidate never waits for one.
Prepared prepare(const LoadedFamily &loaded, const Request &request, std::ostream &progress,
                 const Notes &notes) {
  Prepared out;
  bool early = loaded.family.backend == spec::Backend::host && request.hold == Hold::claim;
  if (early) {
    hold(loaded, request, progress, out);
  }
  if (!request.build_dir.empty()) {
    std::vector<std::string> built_targets = targets(loaded, request);
    if (notes.building) {
      notes.building(built_targets);
    }
    util::ProcessResult built = build_targets(request.build_dir, built_targets, &progress);
    if (!built.ok()) {
      out.failure =
          Failure{"build", "building " + util::join(built_targets, ", ") + " " + built.describe(0),
                  built.out + built.err};
      return out;
    }
  }
  if ((out.failure = identity_failure(loaded, request))) {
    return out;
  }
  if (!early) {
    hold(loaded, request, progress, out);
  }
  if (!out.held.binding.ok) {
    out.failure = Failure{"gpu", "GPU gate: " + out.held.binding.message, ""};
    return out;
  }
  if (notes.held) {
    notes.held(out.held.binding);
  }
  util::RealProcessRunner runner;
  out.setup = run_setup(loaded.family, out.held.binding, runner);
  std::string baseline = loaded.baseline();
  std::string baseline_hash = request.baseline_hash.empty()
                                  ? loaded.candidates.content_hash(loaded.family, baseline)
                                  : request.baseline_hash;
  out.golden = profile::ensure_golden(loaded.family, loaded.layout, baseline, baseline_hash, runner,
                                      out.setup);
  return out;
}

profile::BenchRun run(const LoadedFamily &loaded, const Request &request, Prepared &prepared,
                      util::Progress &progress) {
  util::RealProcessRunner runner;
  profile::BenchRun ran = profile::bench_candidate(
      loaded.family, loaded.layout, request.id, request.best.id,
      request.rounds > 0 ? request.rounds : loaded.family.rounds, runner, prepared.setup, progress);
  prepared.to = unix_now();
  prepared.held.lock.reset(); // the next benchmark may start while this one's caller decides
  return ran;
}

std::string why_measure_again(const LoadedFamily &loaded, const Request &request,
                              const profile::RunSetup &setup) {
  return profile::why_measure_again(loaded.family, loaded.layout, request.id,
                                    loaded.candidates.content_hash(loaded.family, request.id),
                                    request.best.id, request.best.hash, setup);
}

std::optional<profile::RunSetup> one_model_setup(const LoadedFamily &loaded) {
  if (loaded.family.backend != spec::Backend::cuda) {
    return std::nullopt;
  }
  util::RealProcessRunner runner;
  std::optional<gpu::GpuModel> model = gpu::nvidia_one_model(runner);
  if (!model) {
    return std::nullopt;
  }
  profile::RunSetup setup;
  setup.device = model->name;
  setup.driver = model->driver;
  setup.profiler = profiler_choice(loaded.family);
  return setup;
}

profile::Measurement write_failed(const LoadedFamily &loaded, const std::string &id,
                                  const std::string &reason) {
  std::error_code ec;
  fs::remove(loaded.layout.paired_best(id), ec);
  profile::Measurement m;
  m.family = loaded.family.name;
  m.candidate = id;
  m.hash = loaded.candidates.content_hash(loaded.family, id);
  m.status = "failed";
  m.reason = reason;
  m.date = util::utc_now();
  profile::write_measurement(loaded.layout.measurement(id), m);
  return m;
}

} // namespace kopt::measure
