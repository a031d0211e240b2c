#pragma once

#include "profile/measurement.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <map>
#include <string>

namespace kopt::profile {

/// How a harness run is asked for: the mode flag and whether to compare against the golden.
enum class HarnessMode { correctness, benchmark, full_benchmark };

/// Where a harness run happens: the environment that binds it to a GPU and that GPU's name
/// (both empty for host families).
struct RunSetup {
  std::map<std::string, std::string> env;
  std::string device;
};

/// Runs candidate `id`'s harness on the family's configs in `mode` (comparing against the
/// golden when it exists), keeps its output in results/<id>/harness.log, and returns the
/// measurement: status `failed` with the reason when the harness crashes, hangs past the
/// family's timeout or writes an unreadable results file. The keep metric is the harness's
/// chrono time for host families; a benchmark of a cuda family runs under ncu, of a hip family
/// under rocprofv3 (trace in results/<id>/rocprofv3/), when the tool is on PATH (the harness's
/// events otherwise, marked unprofiled).
Measurement run_harness(const spec::Family &family, const spec::Layout &layout,
                        const std::string &id, HarnessMode mode, util::ProcessRunner &runner,
                        const RunSetup &setup = {});

/// Makes sure the golden exists and came from baseline `baseline_id` with content hash
/// `baseline_hash`: otherwise runs the baseline's harness with --write-golden. Returns a
/// one-line description of what it did; throws when the baseline's harness fails.
std::string ensure_golden(const spec::Family &family, const spec::Layout &layout,
                          const std::string &baseline_id, const std::string &baseline_hash,
                          util::ProcessRunner &runner, const RunSetup &setup = {});

/// Returns the machine's CPU model (from /proc/cpuinfo), or "unknown CPU".
std::string host_cpu_model();

} // namespace kopt::profile
