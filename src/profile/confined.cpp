#include "profile/confined.hpp"

#include "buildinfo/hash_stamp.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/text.hpp"

#include <kopt/harness/guard.hpp>

#include <csignal>

namespace kopt::profile {

namespace fs = std::filesystem;

void confine_harness(util::Command &command, std::vector<fs::path> writable,
                     const spec::Family &family, bool profiler) {
  util::Confinement confinement;
  confinement.writable = std::move(writable);
  confinement.profiler = profiler;
  confinement.gpu_runtime = family.backend != spec::Backend::host;
  if (!profiler) {
    command.argv.front() = fs::absolute(command.argv.front()).string();
  }
  command.confinement = std::move(confinement);
  command.env[harness::kGuardVariable] = profiler ? "0" : "1";
}

std::string verified_copy(const spec::Layout &layout, const std::string &id, const fs::path &to) {
  const fs::path built = layout.harness(id);
  fs::copy_file(built, to, fs::copy_options::overwrite_existing);
  const std::string expected = buildinfo::built_hash(layout.gen_dir(id));
  if (expected.empty()) {
    return "";
  }
  const std::string found = util::hash_file(to);
  if (found == expected) {
    return "";
  }
  // Another harness kopt built (a stale one, or another candidate's) carries a hash stamp: it
  // runs, and the content hash it prints is checked against the candidate's as always (a stale
  // binary is named so). A program without one (a script, a wrapper) is never run.
  std::string stamped;
  try {
    stamped = buildinfo::stamped_hash(to);
  } catch (const Error &) {
  }
  if (!stamped.empty()) {
    return "";
  }
  return "candidate " + id + "'s harness " + built.string() +
         " is not the program its build made (file hash " + found + ", built " + expected +
         "): it was changed after kopt built it, and is not run";
}

std::string refusal(const util::ProcessResult &result) {
  const std::string prefix = harness::kRefusedPrefix;
  std::string found;
  for (const std::string &line : util::split(result.err, '\n')) {
    if (line.starts_with(prefix)) {
      found = line.substr(prefix.size()); // the last one: the call that ended it
    }
  }
  if (!found.empty()) {
    return "kopt refused a system call the harness made: " + found;
  }
  if (result.signal == SIGSYS) {
    return "killed by SIGSYS: the harness made a system call kopt's confinement refuses "
           "(changing its CPU or scheduling, starting a process, reaching into or signalling "
           "another process)";
  }
  return "";
}

} // namespace kopt::profile
