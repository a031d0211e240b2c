#pragma once

// What a candidate's instances were compiled with. The compile launcher records each instance
// TU's command, made the same for every candidate folder, in the candidate's folder; a
// measurement names the build it measured by those flags, so that times of an unoptimised
// build are never compared with, or reused for, an optimised one.

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// The build a measurement measured: the flags its instances were compiled with and their hash.
struct BuildFlags {
  /// The compiler and its options, without ccache, the source, the output and the depfile, with
  /// the candidate's folder written `<candidate>`; several lines joined by " | " when the
  /// instances were not all compiled alike; "" when nothing was recorded.
  std::string flags;
  std::string hash; ///< 12 hex digits of flags' hash; "" when nothing was recorded

  /// The optimisation level its flags ask for, e.g. "-O3", "-O0 (no -O)" when none: what a
  /// reader needs first.
  std::string optimisation() const;

  bool known() const { return !hash.empty(); }
};

/// The flags of one compile command (as the launcher runs it, with `cwd` the candidate's
/// folder) when it compiles one of `cwd`'s instances (a source under `cwd`/instances), else "".
std::string instance_flags(const std::vector<std::string> &args, const std::filesystem::path &cwd);

/// Records `flags` for the instance TU `args` compiles: `cwd`/compiled/<source name>.flags.
void record_instance_flags(const std::vector<std::string> &args, const std::filesystem::path &cwd);

/// Reads what was recorded for the instances now in `gen_dir`/instances.
BuildFlags read_build_flags(const std::filesystem::path &gen_dir);

/// Why two builds differ, for a message ("" when they are the same or either is unknown).
std::string build_difference(const BuildFlags &a, const BuildFlags &b);

} // namespace kopt::buildinfo
