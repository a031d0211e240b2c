#include "buildinfo/compile_launcher.hpp"

#include "buildinfo/remote_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <iostream>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

namespace {

std::string absolute_against(const std::string &path, const fs::path &base) {
  fs::path p(path);
  return p.is_absolute() ? path : (base / p).lexically_normal().string();
}

// Splits a depfile into its whitespace-separated words, honouring "\ " and "\\\n".
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

std::string escape_dep(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

} // namespace

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

std::string rewrite_depfile(const std::string &text, const fs::path &cwd,
                            const std::string &target) {
  std::vector<std::string> words = depfile_words(text);
  std::string out = escape_dep(target) + ":";
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
    out += " \\\n  " + escape_dep(absolute_against(word, cwd));
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
  command.env["CCACHE_BASEDIR"] = base_dir.string();
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
      command.env["CCACHE_STATSLOG"] = stats;
    }
  }
  util::ProcessResult result = runner.run(command);
  std::cout << result.out << std::flush;
  std::cerr << result.err << std::flush;
  if (!result.started) {
    return 127;
  }
  if (result.ok()) {
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
      util::write_file_atomic(depfile, rewrite_depfile(text, cwd, target));
    }
  }
  return result.signal ? 128 + result.signal : result.exit_code;
}

} // namespace kopt::buildinfo
