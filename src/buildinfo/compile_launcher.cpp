#include "buildinfo/compile_launcher.hpp"

#include "buildinfo/build_flags.hpp"
#include "buildinfo/ninja_deps.hpp"
#include "buildinfo/remote_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <cctype>
#include <iostream>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

namespace {

std::string absolute_against(const std::string &path, const fs::path &base) {
  fs::path p(path);
  return p.is_absolute() ? path : (base / p).lexically_normal().string();
}

// Splits a depfile into its whitespace-separated words, honouring "\ ", "\\\n" and "$$".
std::vector<std::string> depfile_words(const std::string &text) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char next = text[i + 1];
      if (next == '\n' || next == '\r') {
        ++i;
        if (next == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
          ++i;
        }
        if (!word.empty()) {
          words.push_back(word);
          word.clear();
        }
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        word += next;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += c;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) {
        words.push_back(word);
        word.clear();
      }
      continue;
    }
    word += c;
  }
  if (!word.empty()) {
    words.push_back(word);
  }
  return words;
}

// Characters of a path in compiler output: it ends at blanks, quotes, brackets, commas, colons.
bool path_char(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != ':' && c != '\'' && c != '"' &&
         c != '(' && c != ')' && c != ',';
}

// A path as a ccache setting. ccache reads CCACHE_* variables as it reads its config file:
// `$NAME` and `${NAME}` in a value name environment variables, and a `$` has no escape. Each
// `$` of the path becomes `${KOPT_CCACHE_DOLLAR}`, a variable that holds "$" (ccache does not
// expand what a variable holds), set in `env`.
std::string ccache_path(const std::string &path, std::map<std::string, std::string> &env) {
  std::string out;
  for (char c : path) {
    out += c == '$' ? std::string("${KOPT_CCACHE_DOLLAR}") : std::string(1, c);
  }
  if (out != path) {
    env["KOPT_CCACHE_DOLLAR"] = "$";
  }
  return out;
}

} // namespace

std::map<std::string, SourceOrigin> read_source_origins(const fs::path &dir) {
  std::map<std::string, SourceOrigin> origins;
  std::error_code ec;
  if (!fs::is_regular_file(dir / "manifest.json", ec)) {
    return origins;
  }
  try {
    nlohmann::json manifest = util::read_json(dir / "manifest.json");
    if (!manifest.contains("sources") || !manifest["sources"].is_object()) {
      return origins;
    }
    for (const auto &[generated, origin] : manifest["sources"].items()) {
      origins[generated] = {origin.at("file").get<std::string>(), origin.value("first_line", 0),
                            origin.value("last_line", 0), origin.value("line_offset", 0)};
    }
  } catch (const std::exception &) {
    return {}; // a map that cannot be read costs the user's paths, never the compile
  }
  return origins;
}

std::string rewrite_diagnostics(const std::string &text, const fs::path &dir,
                                const std::map<std::string, SourceOrigin> &origins) {
  std::string out;
  size_t copied = 0; // text before this is in `out`
  for (size_t colon = text.find(':'); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    size_t start = colon;
    while (start > copied && path_char(text[start - 1])) {
      --start;
    }
    if (start == colon) {
      continue;
    }
    fs::path path(text.substr(start, colon - start));
    fs::path full = (path.is_absolute() ? path : dir / path).lexically_normal();
    auto it = origins.find(full.lexically_relative(dir).string());
    if (it == origins.end()) {
      // Another file named relative to the candidate's folder, where the compile ran: the
      // user reads the message elsewhere, so it is named whole.
      std::error_code ec;
      if (!path.is_absolute() && path.string().find('/') != std::string::npos &&
          fs::is_regular_file(full, ec)) {
        out += text.substr(copied, start - copied) + full.string();
        copied = colon;
      }
      continue;
    }
    const SourceOrigin &origin = it->second;
    size_t digits = colon + 1;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    std::string replacement = origin.file.string();
    size_t end = colon;
    if (digits > colon + 1) {
      int line = std::stoi(text.substr(colon + 1, digits - colon - 1));
      if (origin.last_line > 0 && (line < origin.first_line || line > origin.last_line)) {
        continue; // a line kopt added around the template's
      }
      replacement += ":" + std::to_string(line + origin.line_offset);
      end = digits;
    }
    out += text.substr(copied, start - copied) + replacement;
    copied = end;
    colon = end - 1;
  }
  return out + text.substr(copied);
}

std::vector<std::string> rewrite_compile_args(const std::vector<std::string> &args,
                                              const fs::path &build_dir) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if ((arg == "-o" || arg == "-MF") && i + 1 < args.size()) {
      out.push_back(arg);
      out.push_back(absolute_against(args[++i], build_dir));
    } else if (arg.size() > 1 && arg[0] == '@') {
      out.push_back("@" + absolute_against(arg.substr(1), build_dir));
    } else {
      out.push_back(arg);
    }
  }
  return out;
}

std::string rewrite_depfile(const std::string &text, const fs::path &cwd, const std::string &target,
                            const fs::path &build_dir) {
  std::vector<std::string> words = depfile_words(text);
  std::string out = ninja_depfile_word(target, build_dir) + ":";
  bool after_target = false;
  for (const auto &word : words) {
    if (!after_target) {
      // The first rule's target ends with ':' (possibly as its own word).
      if (!word.empty() && word.back() == ':') {
        after_target = true;
      }
      continue;
    }
    if (!word.empty() && word.back() == ':') {
      break; // a second rule (from -MP): ninja needs only the first
    }
    out += " \\\n  " + ninja_depfile_word(absolute_against(word, cwd), build_dir);
  }
  return out + "\n";
}

int launch_compile(const std::vector<std::string> &args, const fs::path &cwd,
                   const fs::path &base_dir, util::ProcessRunner &runner,
                   const std::string &remote_storage) {
  if (args.empty()) {
    throw Error("launch-compile: expected a compile command after --");
  }
  fs::path build_dir = fs::current_path();
  util::Command command;
  command.argv = rewrite_compile_args(args, build_dir);
  command.cwd = cwd;
  command.env["CCACHE_BASEDIR"] = ccache_path(base_dir.string(), command.env);
  command.env["CCACHE_NOHASHDIR"] = "true";
  if (!remote_storage.empty()) {
    // A shared cache that is down must cost a warning, not the build: dropping it here also
    // spares every compile ccache's own connect timeout.
    RemoteStorageCheck check = check_remote_storage(remote_storage, 500);
    if (!check.warning.empty()) {
      std::cerr << "kopt: warning: ccache remote storage unreachable, compiling with the local "
                   "cache only: "
                << check.warning << "\n";
    }
    command.env["CCACHE_REMOTE_STORAGE"] = check.usable;
  }
  fs::create_directories(cwd);
  // A stats log per object tells `kopt build-report` whether this compile was a ccache hit.
  for (size_t i = 0; i + 1 < command.argv.size(); ++i) {
    if (command.argv[i] == "-o") {
      std::string stats = command.argv[i + 1] + ".kopt-ccache";
      std::error_code ignored;
      fs::remove(stats, ignored);
      command.env["CCACHE_STATSLOG"] = ccache_path(stats, command.env);
    }
  }
  util::ProcessResult result = runner.run(command);
  // The compiler names the generated copies it compiled; the user edits the files they came from.
  std::map<std::string, SourceOrigin> origins = read_source_origins(cwd);
  std::cout << rewrite_diagnostics(result.out, cwd, origins) << std::flush;
  std::cerr << rewrite_diagnostics(result.err, cwd, origins) << std::flush;
  if (!result.started) {
    return 127;
  }
  if (result.ok()) {
    // What an instance was compiled with names the build its measurements measured.
    record_instance_flags(command.argv, cwd);
    std::string depfile;
    std::string target;
    for (size_t i = 0; i + 1 < command.argv.size(); ++i) {
      if (command.argv[i] == "-MF") {
        depfile = command.argv[i + 1];
      } else if (command.argv[i] == "-MT") {
        target = command.argv[i + 1];
      }
    }
    if (!depfile.empty() && fs::exists(depfile)) {
      std::string text = util::read_file(depfile);
      if (target.empty()) {
        std::vector<std::string> words = depfile_words(text);
        target = words.empty() ? "" : words[0].substr(0, words[0].size() - 1);
      }
      util::write_file_atomic(depfile, rewrite_depfile(text, cwd, target, build_dir));
    }
  }
  return result.signal ? 128 + result.signal : result.exit_code;
}

} // namespace kopt::buildinfo
