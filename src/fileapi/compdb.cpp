#include "fileapi/compdb.hpp"

#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace kopt::fileapi {

namespace fs = std::filesystem;

namespace {

// A path of an entry: relative ones are the entry's directory's.
std::string normal(const fs::path &path, const fs::path &dir) {
  return normal_path(path.is_absolute() ? path : dir / path);
}

// A compiler named bare ("hipcc", "g++"): the first one on PATH, as the build ran it.
std::string resolve_compiler(const std::string &name, const fs::path &dir) {
  if (name.find('/') != std::string::npos) {
    return normal(name, dir);
  }
  const char *path = std::getenv("PATH");
  for (const std::string &folder : util::split(path ? path : "", ':')) {
    std::error_code ec;
    fs::path candidate = fs::path(folder) / name;
    if (!folder.empty() && fs::is_regular_file(candidate, ec)) {
      return candidate.string();
    }
  }
  throw Error("the compiler '" + name + "' of the compile database is not on PATH");
}

// An argument as a message shows it: control characters escaped, long ones cut.
std::string shown(const std::string &arg) {
  std::string out;
  for (char c : arg) {
    out += c == '\n'   ? std::string("\\n")
           : c == '\r' ? std::string("\\r")
           : c == '\0' ? std::string("\\0")
                       : std::string(1, c);
  }
  return "'" + util::excerpt(out, 60) + "'";
}

// Splits a command (or a response file's text), refusing a quote left open: the rest of the
// line would become one argument the build never ran with.
std::vector<std::string> split_command(const std::string &text, const std::string &where) {
  char open = 0;
  std::vector<std::string> args = split_fragment(text, &open);
  if (open != 0) {
    throw Error(where + ": argument " + std::to_string(args.size()) + " " + shown(args.back()) +
                ": its " + std::string(1, open) + " quote is never closed");
  }
  return args;
}

std::vector<std::string> arguments_of(const nlohmann::json &entry, const std::string &where) {
  if (entry.contains("arguments") && entry["arguments"].is_array()) {
    std::vector<std::string> out;
    for (const auto &a : entry["arguments"]) {
      if (!a.is_string()) {
        throw Error(where + ": arguments: expected strings");
      }
      out.push_back(a.get<std::string>());
    }
    return out;
  }
  if (entry.contains("command") && entry["command"].is_string()) {
    return split_command(entry["command"].get<std::string>(), where + ": command");
  }
  throw Error(where + ": expected 'arguments' (a list) or 'command' (a string)");
}

// Checks that an argument can be carried into the CMake file and the consumer's build.ninja:
// a line break or a NUL byte cannot stand in either.
void check_carried(const std::string &arg, size_t index, const std::string &where) {
  for (auto [c, what] : {std::pair{'\n', "a line break"}, std::pair{'\r', "a carriage return"},
                         std::pair{'\0', "a NUL byte"}}) {
    if (arg.find(c) != std::string::npos) {
      throw Error(where + ": argument " + std::to_string(index) + " " + shown(arg) + " holds " +
                  what + ": the imported flags cannot carry it into a build file");
    }
  }
}

// The entry's arguments with each response file (@file, read against the entry's directory, as
// the compiler read it there) replaced by the arguments it holds, every one checked.
void expand_arguments(const std::vector<std::string> &args, size_t from, const fs::path &dir,
                      const std::string &where, std::vector<std::string> &reading,
                      std::vector<std::string> &out) {
  for (size_t i = from; i < args.size(); ++i) {
    const std::string &a = args[i];
    check_carried(a, i + 1, where);
    if (a.size() < 2 || a[0] != '@') {
      out.push_back(a);
      continue;
    }
    std::string file = normal(a.substr(1), dir);
    std::string at = where + ": argument " + std::to_string(i + 1) + " " + shown(a);
    if (std::find(reading.begin(), reading.end(), file) != reading.end()) {
      throw Error(at + ": the response file " + file + " is read again inside itself");
    }
    if (std::string why = util::why_not_regular(file); !why.empty()) {
      throw Error(at + ": the response file " + file + " (against the entry's directory) " + why);
    }
    std::string text = util::read_file(file);
    reading.push_back(file);
    std::string inside = where + ": response file " + file;
    expand_arguments(split_command(text, inside), 0, dir, inside, reading, out);
    reading.pop_back();
  }
}

// The entry's directory: the folder its relative paths and response files are read against.
fs::path directory_of(const nlohmann::json &entry, const std::string &where) {
  fs::path dir = entry["directory"].get<std::string>();
  std::error_code ec;
  if (dir.empty() || !dir.is_absolute()) {
    throw Error(where + ": directory '" + dir.string() + "': expected the absolute folder the " +
                "command ran in (its relative paths are that folder's)");
  }
  if (!fs::is_directory(dir, ec)) {
    throw Error(where + ": directory " + dir.string() + " is not a folder (any more): its " +
                "relative paths and response files cannot be read against it");
  }
  return dir;
}

// Quotes an argument for a POSIX shell when it needs it (what split_fragment reads back).
std::string shell_quote(const std::string &arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// The options whose next argument is a path (made absolute against the entry's folder when
// relative), and those of the compile step itself, which the family's own rule supplies.
const std::set<std::string> kPathNext = {"-I", "-isystem", "-iquote", "-idirafter", "-include"};
const std::set<std::string> kDropNext = {"-o", "-MF", "-MT", "-MQ"};
const std::set<std::string> kDrop = {"-c", "-MD", "-MMD", "-MP"};

std::vector<std::string> flags_of(const std::vector<std::string> &args, const fs::path &dir,
                                  const std::string &source) {
  std::vector<std::string> out;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (kDropNext.count(a)) {
      ++i;
    } else if (kDrop.count(a) || normal(a, dir) == source) {
      continue;
    } else if (kPathNext.count(a) && i + 1 < args.size()) {
      out.push_back(a);
      out.push_back(normal(args[++i], dir));
    } else if (a.size() > 2 && a.starts_with("-I")) {
      out.push_back("-I" + normal(a.substr(2), dir));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

std::string language_of(const std::string &compiler, const std::string &source) {
  std::string name = fs::path(compiler).filename().string();
  std::string ext = fs::path(source).extension().string();
  if (name.starts_with("nvcc") || ext == ".cu") {
    return "CUDA";
  }
  return ext == ".c" ? "C" : "CXX";
}

std::string standard_of(const std::vector<std::string> &flags) {
  std::string standard;
  for (const std::string &f : flags) {
    for (const char *prefix : {"-std=c++", "-std=gnu++", "--std=c++", "-std=c", "-std=gnu"}) {
      if (f.starts_with(prefix) && util::is_digits(f.substr(std::string(prefix).size()))) {
        standard = f.substr(std::string(prefix).size());
        break;
      }
    }
  }
  return standard;
}

} // namespace

nlohmann::json read_compile_database(const fs::path &path, util::ProcessRunner &runner) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return util::read_json(path);
  }
  if (!fs::is_directory(path, ec)) {
    throw Error(path.string() + ": no such compile_commands.json or build folder");
  }
  if (fs::is_regular_file(path / "compile_commands.json", ec)) {
    return util::read_json(path / "compile_commands.json");
  }
  if (!fs::is_regular_file(path / "build.ninja", ec)) {
    throw Error(path.string() + ": neither compile_commands.json nor build.ninja: give the " +
                "compile database a build wrote (e.g. with `ninja -t compdb` in its folder)");
  }
  util::Command command;
  command.argv = {"ninja", "-C", path.string(), "-t", "compdb"};
  command.timeout_s = 120;
  util::ProcessResult result = runner.run(command);
  if (!result.ok()) {
    throw Error(path.string() + ": `ninja -t compdb` " + result.describe(120) + ": " +
                std::string(util::trim(result.err)));
  }
  return util::parse_json(result.out, path.string() + " (ninja -t compdb)");
}

Imported select_from_database(const nlohmann::json &database, const std::string &where,
                              const ImportRequest &request) {
  if (!database.is_array()) {
    throw Error(where + ": expected a list of compile commands");
  }
  if (request.source.empty()) {
    throw Error("kopt import --compdb: give --source <kernel file>: a compile database has no "
                "targets, only one command per source");
  }
  std::string wanted = normal(request.source, fs::current_path());
  std::vector<std::string> found;
  std::vector<std::string> names;
  Imported out;
  for (size_t i = 0; i < database.size(); ++i) {
    const nlohmann::json &entry = database[i];
    std::string at = where + ": entry " + std::to_string(i + 1);
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string() ||
        !entry.contains("directory") || !entry["directory"].is_string()) {
      throw Error(at +
                  ": expected an object with 'directory', 'file' and 'arguments' or 'command'");
    }
    fs::path dir = entry["directory"].get<std::string>();
    std::string file = normal(entry["file"].get<std::string>(), dir);
    names.push_back(file);
    if (file != wanted) {
      continue;
    }
    std::vector<std::string> written = arguments_of(entry, at);
    if (written.empty()) {
      throw Error(at + ": an empty command");
    }
    dir = directory_of(entry, at);
    check_carried(written.front(), 1, at);
    std::vector<std::string> args = {written.front()};
    std::vector<std::string> reading;
    expand_arguments(written, 1, dir, at, reading, args);
    std::vector<std::string> flags = flags_of(args, dir, file);
    if (!found.empty() && flags != out.flags) {
      throw Error(where + ": " + file + " is compiled " + std::to_string(found.size() + 1) +
                  " times with different arguments (entries " + util::join(found, ", ") + " and " +
                  std::to_string(i + 1) +
                  "): which one the family should use is not kopt's "
                  "guess; give a database of one build");
    }
    found.push_back(std::to_string(i + 1));
    out.compiler = resolve_compiler(args.front(), dir);
    out.flags = flags;
  }
  if (found.empty()) {
    std::string nearest = util::nearest(wanted, names);
    throw Error(request.source.string() + ": no entry of " + where + " compiles it" +
                (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") + " (" +
                std::to_string(names.size()) + " entries)");
  }
  out.build_dir = where;
  out.target = fs::path(wanted).stem().string();
  out.type = "COMPILE_COMMANDS";
  out.source = wanted;
  out.language = request.language.empty() ? language_of(out.compiler, wanted) : request.language;
  out.standard = standard_of(out.flags);
  for (const std::string &f : out.flags) {
    out.fragments.push_back(shell_quote(f));
  }
  out.baseline = "compile";
  out.baseline_reason = "a compile database names no library: baseline 00 compiles its own "
                        "instances with " +
                        fs::path(wanted).filename().string() + "'s arguments";
  if (request.baseline == "library") {
    throw Error("kopt import --baseline library: a compile database names no library to link");
  }
  return out;
}

} // namespace kopt::fileapi
