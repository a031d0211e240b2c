#pragma once

// `kopt analyze`: one representative config per class profiled under ncu's details page, each
// launch judged (ncu_details.hpp), and the limiters voted into one headline.

#include "profile/bench.hpp"
#include "profile/ncu_details.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/csv.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::profile {

/// The configs an analysis profiles: one per config class, in the order classes first appear.
struct Representatives {
  util::CsvTable configs;           ///< the family's configs file
  std::vector<size_t> rows;         ///< the chosen row of each class
  std::vector<std::string> classes; ///< the class of each chosen row
};

/// Picks each class's middle row in file order, so that a class spanning small and large shapes
/// is shown by a typical one.
Representatives representatives(const spec::Family &family, util::CsvTable configs);

/// Returns the ncu command line that profiles `harness` (an argv) with the sections the report
/// reads and the warp-stall breakdown, for kernels matching `kernel_regex`.
std::vector<std::string> ncu_analyze_command(const std::string &kernel_regex,
                                             const std::vector<std::string> &harness);

/// What an analysis found: analyze.json plus the text report.
struct Analysis {
  std::string kernel;      ///< the hottest kernel: the most profiled time over the launches
  std::string top_limiter; ///< the longest launch's limiter: that is where the time goes
  std::string headline;    ///< "top limiter: <l> (longest class <c>; <n> of <m> classes)"
  std::string report;      ///< one line per launch: class, config, kernel, us, bottleneck
  nlohmann::json measured; ///< what the profiled run was; null for a saved output
  nlohmann::json json;     ///< analyze.json
};

/// Judges each launch and votes: the launches' configs index `chosen`; `source` names where
/// ncu's output is. Throws kopt::Error when no launch matched `kernel_regex`.
Analysis analyze_launches(const std::vector<LaunchDetails> &launches, const Representatives &chosen,
                          const std::string &candidate, const std::string &source,
                          const std::string &kernel_regex, nlohmann::json measured = nullptr);

/// What `kopt analyze` is asked for.
struct AnalyzeRequest {
  std::string candidate;     ///< the candidate's id
  std::string expected_hash; ///< its content hash: the profiled harness must print it
  std::string ncu_output;    ///< a saved `ncu --csv --page details` output; empty: run ncu
};

/// Analyses candidate `request.candidate` of a cuda family under results/<id>/analyze/ (holding
/// its results lock): profiles its harness once per representative under ncu on the device
/// `find_device` returns (or reads the saved output), writes analyze.json and returns the
/// analysis. Returns nullopt when there is no device or ncu fails (saying why on `err`); throws
/// kopt::Error for another backend, a missing or stale harness binary, or no matching launch.
/// `progress` counts two steps: the profiled run and reading its report.
std::optional<Analysis> analyze(const spec::Family &family, const spec::Layout &layout,
                                const AnalyzeRequest &request, util::ProcessRunner &runner,
                                const std::function<std::optional<RunSetup>()> &find_device,
                                std::ostream &err,
                                util::Progress &progress = util::Progress::none());

} // namespace kopt::profile
