#include "buildinfo/expansion.hpp"

#include "buildinfo/symbols.hpp"
#include "util/text.hpp"

#include <cctype>
#include <sstream>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

namespace {

bool is_launcher_or_cache(const std::string &word) {
  std::string name = fs::path(word).filename().string();
  return name == "ccache" || name == "sccache";
}

// The step of a command line that compiles: the one with -c, else the last.
std::vector<std::string> compile_step(const std::string &command) {
  std::vector<std::vector<std::string>> steps = command_steps(command);
  for (const auto &step : steps) {
    for (const auto &word : step) {
      if (word == "-c") {
        return step;
      }
    }
  }
  return steps.back();
}

} // namespace

PreprocessCommand preprocess_command(const std::string &compile_command,
                                     const fs::path &build_dir) {
  PreprocessCommand out;
  out.cwd = build_dir;
  std::vector<std::string> words = compile_step(compile_command);
  size_t start = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "launch-compile") {
      for (size_t j = i + 1; j < words.size(); ++j) {
        if (words[j] == "--cwd" && j + 1 < words.size()) {
          out.cwd = words[j + 1];
        }
        if (words[j] == "--") {
          start = j + 1;
          break;
        }
      }
      break;
    }
  }
  while (start < words.size() && is_launcher_or_cache(words[start])) {
    ++start;
  }
  bool hip = false;
  static const std::set<std::string> dropped = {"-c", "-MD", "-MMD"};
  static const std::set<std::string> dropped_with_value = {"-o", "-MF", "-MT", "-MQ",
                                                           "--dependency-output"};
  for (size_t i = start; i < words.size(); ++i) {
    const std::string &word = words[i];
    if (dropped_with_value.count(word)) {
      ++i;
      continue;
    }
    if (dropped.count(word) || word == "--generate-dependencies-with-compile") {
      continue;
    }
    hip = hip || word.rfind("--offload-arch", 0) == 0 || word == "--hip-link" ||
          (word == "hip" && i > 0 && words[i - 1] == "-x") ||
          fs::path(word).filename().string().find("hipcc") != std::string::npos;
    out.argv.push_back(word);
  }
  if (!out.argv.empty()) {
    out.argv.insert(out.argv.begin() + 1, "-E");
    if (hip) {
      out.argv.insert(out.argv.begin() + 2, "--cuda-host-only");
    }
  }
  return out;
}

namespace {

std::string squeeze_spaces(const std::string &line) {
  std::string out;
  bool space = false;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    out += c;
  }
  return out;
}

// A linemarker's line number and file: `# 12 "f.h" 1 3`, `#line 12 "f.h"`.
std::optional<std::pair<int, std::string>> linemarker(const std::string &line) {
  size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#') {
    return std::nullopt;
  }
  std::istringstream in(line.substr(at + 1));
  std::string word;
  in >> word;
  if (word == "line") {
    in >> word;
  }
  if (word.empty() || !util::is_digits(word)) {
    return std::nullopt;
  }
  int number = std::stoi(word);
  size_t open = line.find('"');
  size_t close = line.rfind('"');
  if (open == std::string::npos || close <= open) {
    return std::nullopt;
  }
  std::string file;
  for (size_t i = open + 1; i < close; ++i) {
    if (line[i] == '\\' && i + 1 < close) {
      ++i;
    }
    file += line[i];
  }
  return std::make_pair(number, file);
}

} // namespace

Expansion parse_expansion(const std::string &text,
                          const std::function<std::string(const std::string &)> &name_of) {
  Expansion expansion;
  std::istringstream lines(text);
  std::string line;
  std::string file;
  int number = 0;
  std::map<std::string, std::string> names;
  while (std::getline(lines, line)) {
    if (auto marker = linemarker(line)) {
      number = marker->first;
      auto known = names.find(marker->second);
      if (known == names.end()) {
        known = names.emplace(marker->second, name_of(marker->second)).first;
      }
      file = known->second;
      continue;
    }
    std::string normal = squeeze_spaces(line);
    if (!file.empty() && !normal.empty()) {
      SourceLine at{file, number};
      auto [it, added] = expansion.text.try_emplace(at);
      if (added) {
        expansion.order.push_back(at);
      }
      it->second.insert(normal);
      expansion.files.insert(file);
    }
    ++number;
  }
  return expansion;
}

std::optional<SourceLine> first_difference(const Expansion &baseline, const Expansion &candidate) {
  for (const auto &at : baseline.order) {
    auto theirs = candidate.text.find(at);
    if (theirs == candidate.text.end() || theirs->second != baseline.text.at(at)) {
      return at;
    }
  }
  for (const auto &at : candidate.order) {
    if (baseline.files.count(at.first) && !baseline.text.count(at)) {
      return at;
    }
  }
  return std::nullopt;
}

} // namespace kopt::buildinfo
