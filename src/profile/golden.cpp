#include "profile/bench_detail.hpp"
#include "profile/confined.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/hash.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

namespace kopt::profile {

namespace fs = std::filesystem;

using detail::harness_failure;
using detail::write_log;

std::string golden_stale_reason(const spec::Family &family, const spec::Layout &layout,
                                const std::string &baseline_hash) {
  if (!fs::exists(layout.golden()) || !fs::exists(layout.golden_info())) {
    return "no golden yet";
  }
  nlohmann::json info = util::read_json(layout.golden_info());
  std::string configs = family.configs.filename().string();
  // Keyed by content, not by path: an edited configs file at the same path is other configs.
  if (info.value("configs_hash", "") != util::hash_file(family.configs)) {
    return configs + " changed";
  }
  if (info.value("baseline_hash", "") != baseline_hash) {
    return "the baseline's content hash changed";
  }
  return "";
}

bool golden_is_current(const spec::Family &family, const spec::Layout &layout,
                       const std::string &baseline_hash) {
  return golden_stale_reason(family, layout, baseline_hash).empty();
}

std::string ensure_golden(const spec::Family &family, const spec::Layout &layout,
                          const std::string &baseline_id, const std::string &baseline_hash,
                          util::ProcessRunner &runner, const RunSetup &setup) {
  util::FileLock lock(layout.lock("golden")); // the first of several benches makes it
  std::string stale = golden_stale_reason(family, layout, baseline_hash);
  if (stale.empty()) {
    return "golden up to date (from candidate " + baseline_id + ")";
  }
  fs::path harness = layout.harness(baseline_id);
  if (!fs::exists(harness)) {
    throw Error("cannot make the golden: no harness binary at " + harness.string() +
                " (build target candidate_" + baseline_id + " first)");
  }
  // Hashed before the run: a configs file edited while the harness runs is caught next time.
  std::string configs_hash = util::hash_file(family.configs);
  fs::create_directories(layout.golden().parent_path());
  fs::path fresh = layout.golden().string() + ".new";
  kopt::harness::Options args;
  args.mode = kopt::harness::Mode::write_golden;
  args.configs = family.configs.string();
  args.write_golden = fresh.string();
  util::Command command;
  command.argv = harness_argv(harness, args);
  command.timeout_s = family.timeout_s;
  command.env = setup.env;
  command.cpu = setup.cpu;
  confine_harness(command, {layout.golden().parent_path()}, family);
  util::ProcessResult result = runner.run(command);
  write_log(layout.golden().parent_path() / "golden.log", command, result, family.timeout_s);
  if (!result.ok() || !fs::exists(fresh)) {
    // The harness's own last lines (its error) and the config it stopped in, as a failed
    // measurement names them.
    std::string why = result.ok() ? "harness wrote no golden at " + fresh.string()
                                  : harness_failure(result, family.timeout_s);
    throw Error("cannot make the golden: baseline " + baseline_id + "'s " + why +
                " (log: " + (layout.golden().parent_path() / "golden.log").string() + ")");
  }
  std::string printed = harness_hash(result.out);
  if (printed != baseline_hash) {
    throw Error("cannot make the golden: baseline " + baseline_id + "'s harness printed hash '" +
                printed + "', expected " + baseline_hash + " (stale binary?)");
  }
  fs::rename(fresh, layout.golden());
  util::write_json_atomic(layout.golden_info(), {{"baseline", baseline_id},
                                                 {"baseline_hash", baseline_hash},
                                                 {"configs", family.configs.string()},
                                                 {"configs_hash", configs_hash},
                                                 {"date", util::utc_now()}});
  if (stale == "no golden yet") {
    return "golden written from candidate " + baseline_id;
  }
  return "golden remade: " + stale + " (from candidate " + baseline_id + ")";
}

} // namespace kopt::profile
