#include "buildinfo/build_flags.hpp"

#include "util/atomic_file.hpp"
#include "util/hash.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kopt::buildinfo {

namespace {

// The source among `args` that is one of `cwd`'s instances, or "".
std::string instance_source(const std::vector<std::string> &args, const fs::path &cwd) {
  const std::string instances = (cwd / "instances").lexically_normal().string() + "/";
  for (const auto &arg : args) {
    fs::path path(arg);
    if (!arg.empty() && arg[0] != '-' &&
        (path.is_absolute() ? path : cwd / path)
            .lexically_normal()
            .string()
            .starts_with(instances)) {
      return arg;
    }
  }
  return "";
}

// The words of a response file, or the argument itself when it cannot be read.
std::vector<std::string> expand_response(const std::string &arg) {
  std::error_code ec;
  if (arg.size() < 2 || arg[0] != '@' || !fs::is_regular_file(arg.substr(1), ec)) {
    return {arg};
  }
  std::istringstream words(util::read_file(arg.substr(1)));
  std::vector<std::string> out;
  for (std::string word; words >> word;) {
    out.push_back(word);
  }
  return out;
}

std::string replace_all(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); !from.empty() && at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

} // namespace

std::string BuildFlags::optimisation() const {
  std::string level;
  std::istringstream words(flags);
  for (std::string word; words >> word;) {
    if (word.size() >= 2 && word.starts_with("-O")) {
      level = word; // the last one counts, as for the compiler
    }
  }
  return level.empty() ? "-O0 (no -O)" : level;
}

std::string instance_flags(const std::vector<std::string> &args, const fs::path &cwd) {
  const std::string source = instance_source(args, cwd);
  if (source.empty()) {
    return "";
  }
  static const std::set<std::string> with_value = {"-o", "-MF", "-MT", "-MQ"};
  static const std::set<std::string> alone = {"-c", "-MD", "-MMD"};
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (i == 0 && fs::path(arg).filename() == "ccache") {
      continue;
    }
    if (with_value.count(arg)) {
      ++i;
      continue;
    }
    if (alone.count(arg) || arg == source) {
      continue;
    }
    for (const auto &word : expand_response(arg)) {
      kept.push_back(replace_all(word, cwd.lexically_normal().string(), "<candidate>"));
    }
  }
  return util::join(kept, " ");
}

void record_instance_flags(const std::vector<std::string> &args, const fs::path &cwd) {
  std::string flags = instance_flags(args, cwd);
  if (flags.empty()) {
    return;
  }
  fs::path source(instance_source(args, cwd));
  util::write_file_atomic(cwd / "compiled" / (source.filename().string() + ".flags"), flags + "\n");
}

BuildFlags read_build_flags(const fs::path &gen_dir) {
  std::error_code ec;
  std::set<std::string> lines;
  if (fs::is_directory(gen_dir / "instances", ec)) {
    for (const auto &entry : fs::directory_iterator(gen_dir / "instances", ec)) {
      fs::path record = gen_dir / "compiled" / (entry.path().filename().string() + ".flags");
      if (fs::is_regular_file(record, ec)) {
        lines.insert(std::string(util::trim(util::read_file(record))));
      }
    }
  }
  BuildFlags build;
  if (lines.empty()) {
    return build;
  }
  build.flags = util::join(std::vector<std::string>(lines.begin(), lines.end()), " | ");
  util::Hasher hasher;
  hasher.add(build.flags);
  build.hash = hasher.hex().substr(0, 12);
  return build;
}

std::string build_difference(const BuildFlags &a, const BuildFlags &b) {
  if (!a.known() || !b.known() || a.hash == b.hash) {
    return "";
  }
  std::string text = "build " + a.hash + " (" + a.optimisation() + ") against build " + b.hash +
                     " (" + b.optimisation() + ")";
  return text;
}

} // namespace kopt::buildinfo
