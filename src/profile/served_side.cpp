#include "profile/bench_detail.hpp"

#include "profile/confined.hpp"
#include "profile/cupti_trace.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

#include <cstdio>
#include <random>

namespace kopt::profile::detail {

namespace fs = std::filesystem;

namespace {

// A random token of 16 hex digits, from the OS's entropy.
std::string fresh_token() {
  std::random_device entropy;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", entropy(), entropy());
  return text;
}

} // namespace

ServedSide::ServedSide(const spec::Family &family, const spec::Layout &layout, std::string id,
                       std::string side, util::ProcessRunner &runner, const RunSetup &setup,
                       const fs::path &dir, std::vector<fs::path> round_dirs)
    : family_(family), layout_(layout), id_(std::move(id)), runner_(runner), setup_(setup),
      log_(dir / (side + "-" + id_ + ".log")), own_(dir / (side + "-" + id_)),
      trace_(own_ / "cupti_trace.csv"), round_dirs_(std::move(round_dirs)) {}

// Runs the next round into `run_dir`; returns its measurement, timed by the harness until
// finish() reads the trace, or failed (and then the process has ended).
Measurement ServedSide::round(const fs::path &run_dir) {
  util::throw_if_interrupted("candidate " + id_ + "'s harness");
  Measurement m = describe_run(family_, layout_, id_, HarnessMode::benchmark, setup_);
  fs::create_directories(run_dir);
  fs::path csv = run_dir / "results.csv";
  fs::remove(csv); // a stale file must never pass for this round's results
  if (ended_) {
    return failed(m, reason_);
  }
  if (!talk_) {
    fs::path harness = layout_.harness(id_);
    if (!fs::exists(harness)) {
      return failed(m, "no harness binary at " + harness.string() + " (build target candidate_" +
                           id_ + " first)");
    }
    // The process writes only its own folder (its trace) and its rounds' folders, made now; it
    // runs a checked copy of its harness, which the other side cannot write.
    fs::create_directories(own_);
    for (const fs::path &round_dir : round_dirs_) {
      fs::create_directories(round_dir);
    }
    const fs::path copy = own_ / harness.filename();
    if (std::string problem = verified_copy(layout_, id_, copy); !problem.empty()) {
      ended_ = true;
      reason_ = problem;
      return failed(m, reason_);
    }
    // Each round's results file comes on stdin; the golden is compared in the first round.
    command_ = harness_command(family_, layout_, HarnessMode::benchmark, setup_, {},
                               GoldenCheck::compare, copy, true);
    trace_with_cupti(command_, find_cupti_tracer(), trace_);
    std::vector<fs::path> writable = round_dirs_;
    writable.push_back(own_);
    confine_harness(command_, std::move(writable), family_);
    talk_ = runner_.start(command_);
  }
  std::string token = fresh_token();
  if (!talk_->ask("run " + token + " " + csv.string(), "kopt-run-done " + token,
                  family_.timeout_s)) {
    end();
    return failed(m, reason_.empty() ? "the harness ended without finishing the round" : reason_);
  }
  try {
    add_configs(m, read_harness_results(csv, m.config_columns, family_.impl), family_);
  } catch (const Error &e) {
    return failed(m, e.what());
  }
  return m;
}

// Stops the process while the other side runs (SIGSTOP), or lets it go on: it can then launch
// nothing, on the CPU or the GPU, during the other side's rounds.
void ServedSide::hold(bool stopped) {
  if (talk_ && !ended_) {
    talk_->hold(stopped);
  }
}

// Closes the process's stdin, so that it begins to exit (and write its trace).
void ServedSide::close() {
  if (talk_ && !ended_) {
    talk_->close_input();
  }
}

// Ends the process (if it runs) and times each of `rounds` (round()'s measurements, in order)
// by its share of the trace: round j holds the trace's ranges of configs j x C to
// (j + 1) x C - 1, C configs of repeat timed runs each.
void ServedSide::finish(std::vector<Measurement> &rounds) {
  end();
  for (Measurement &m : rounds) {
    m.hash = hash_;
  }
  if (rounds.empty()) {
    return;
  }
  if (!reason_.empty()) {
    // A harness that failed after its last round's results left no trace to time any round.
    if (rounds.back().ok()) {
      failed(rounds.back(), reason_ + " (after its last round)");
    }
    return;
  }
  const int configs = static_cast<int>(rounds.front().configs.size());
  try {
    ProfileReport all = read_cupti_runs(trace_, configs * static_cast<int>(rounds.size()),
                                        family_.kernel_regex, family_.repeat);
    for (size_t j = 0; j < rounds.size(); ++j) {
      ProfileReport share{all.profiled, all.reason, {}, all.available_kernels};
      for (const ProfiledConfig &c : all.configs) {
        if (c.config / configs == static_cast<int>(j)) {
          share.configs.push_back(c);
          share.configs.back().config -= static_cast<int>(j) * configs;
        }
      }
      use_profiler_times(rounds[j], share, Source::cupti, family_.kernel_regex);
    }
  } catch (const Error &e) {
    for (Measurement &m : rounds) {
      m.reason = std::string("CUPTI trace unreadable, times are the harness's events: ") + e.what();
    }
  }
}

Measurement ServedSide::failed(Measurement &m, const std::string &reason) {
  m.status = "failed";
  m.reason = reason;
  m.configs.clear();
  return m;
}

// Closes the harness's stdin and waits for it to exit; keeps its hash, its log and, when it
// failed, why.
void ServedSide::end() {
  if (ended_ || !talk_) {
    ended_ = true;
    return;
  }
  ended_ = true;
  util::ProcessResult result = talk_->finish(family_.timeout_s);
  write_log(log_, command_, result, family_.timeout_s);
  hash_ = harness_hash(result.out);
  if (!result.ok()) {
    reason_ = traced_failure(result, family_, trace_);
  }
}

} // namespace kopt::profile::detail
