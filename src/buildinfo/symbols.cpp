#include "buildinfo/symbols.hpp"

#include "util/read_file.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

std::vector<std::string> shell_words(const std::string &command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == '\'') {
      size_t end = command.find('\'', i + 1);
      end = end == std::string::npos ? command.size() : end;
      word += command.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::string("\"\\$`").find(command[i + 1]) != std::string::npos) {
          ++i;
        }
        word += command[i];
      }
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(word);
      }
      word.clear();
      in_word = false;
    } else if (c == ';' || c == '|' ||
               (c == '&' && i + 1 < command.size() && command[i + 1] == '&')) {
      if (in_word) {
        words.push_back(word);
      }
      word.clear();
      in_word = false;
      words.push_back(c == '&' ? "&&" : std::string(1, c));
      i += c == '&' ? 1 : 0;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) {
    words.push_back(word);
  }
  return words;
}

std::vector<std::vector<std::string>> command_steps(const std::string &command) {
  std::vector<std::vector<std::string>> steps(1);
  for (auto &word : shell_words(command)) {
    if (word == "&&" || word == ";" || word == "|") {
      steps.emplace_back();
    } else {
      steps.back().push_back(std::move(word));
    }
  }
  return steps;
}

namespace {

bool ends_with(const std::string &text, const std::string &tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

fs::path absolute_in(const std::string &path, const fs::path &build_dir) {
  fs::path p(path);
  return (p.is_absolute() ? p : build_dir / p).lexically_normal();
}

// A shared library's name: libfoo.so or libfoo.so.6.
bool shared_name(const std::string &path) {
  std::string name = fs::path(path).filename().string();
  size_t at = name.find(".so");
  return at != std::string::npos && (at + 3 == name.size() || name[at + 3] == '.');
}

void add_link_word(const std::string &word, const fs::path &build_dir, LinkInputs &inputs) {
  if (ends_with(word, ".o") || ends_with(word, ".obj")) {
    inputs.objects.push_back(absolute_in(word, build_dir));
  } else if (ends_with(word, ".a")) {
    inputs.archives.push_back(absolute_in(word, build_dir));
  } else if (shared_name(word)) {
    inputs.shared.push_back(absolute_in(word, build_dir));
  }
}

// Adds the inputs that `words` (a link step without its program) name.
void add_link_words(const std::vector<std::string> &words, const fs::path &build_dir,
                    LinkInputs &inputs) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string &word = words[i];
    bool has_next = i + 1 < words.size();
    if ((word == "-o" || word == "-Xlinker" || word == "-MF") && has_next) {
      ++i;
    } else if (word == "-L" && has_next) {
      inputs.search.push_back(absolute_in(words[++i], build_dir));
    } else if (word.rfind("-L", 0) == 0) {
      inputs.search.push_back(absolute_in(word.substr(2), build_dir));
    } else if (word == "-l" && has_next) {
      inputs.libraries.push_back(words[++i]);
    } else if (word.rfind("-l", 0) == 0) {
      inputs.libraries.push_back(word.substr(2));
    } else if (word.size() > 1 && word[0] == '@') {
      // A response file (long link lines) holds the objects and libraries.
      fs::path rsp = absolute_in(word.substr(1), build_dir);
      std::error_code ec;
      add_link_words(shell_words(fs::exists(rsp, ec) ? util::read_file(rsp) : ""), build_dir,
                     inputs);
    } else if (!word.empty() && word[0] != '-') {
      add_link_word(word, build_dir, inputs);
    }
  }
}

} // namespace

LinkInputs parse_link_command(const std::string &commands, const std::string &binary,
                              const fs::path &build_dir) {
  std::istringstream lines(commands);
  std::string line;
  LinkInputs found;
  while (std::getline(lines, line)) {
    for (const auto &step : command_steps(line)) {
      for (size_t i = 0; i + 1 < step.size(); ++i) {
        if (step[i] == "-o" && fs::path(step[i + 1]).filename() == binary) {
          found = {};
          add_link_words({step.begin() + 1, step.end()}, build_dir, found);
        }
      }
    }
  }
  return found;
}

std::vector<fs::path> static_libraries(const LinkInputs &inputs) {
  std::vector<fs::path> archives;
  for (const auto &name : inputs.libraries) {
    for (const auto &dir : inputs.search) {
      std::error_code ec;
      if (name[0] == ':') {
        fs::path exact = dir / name.substr(1);
        if (fs::exists(exact, ec)) {
          if (ends_with(exact.string(), ".a")) {
            archives.push_back(exact);
          }
          break;
        }
        continue;
      }
      if (fs::exists(dir / ("lib" + name + ".so"), ec)) {
        break; // the loader's copy, which ldd lists
      }
      if (fs::exists(dir / ("lib" + name + ".a"), ec)) {
        archives.push_back(dir / ("lib" + name + ".a"));
        break;
      }
    }
  }
  return archives;
}

std::vector<fs::path> parse_ldd(const std::string &text) {
  std::vector<fs::path> libraries;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string entry(util::trim(line));
    size_t arrow = entry.find(" => ");
    std::string path = arrow == std::string::npos ? entry : entry.substr(arrow + 4);
    path = path.substr(0, path.find(" ("));
    if (!path.empty() && path[0] == '/') {
      libraries.emplace_back(path);
    }
  }
  return libraries;
}

std::string definer(const DefinedSymbol &symbol) {
  if (symbol.shared) {
    return fs::path(symbol.file).filename().string();
  }
  size_t member = symbol.file.rfind(':');
  if (member != std::string::npos && member > 0 && symbol.file.substr(0, member).ends_with(".a")) {
    return fs::path(symbol.file.substr(0, member)).filename().string() + "(" +
           symbol.file.substr(member + 1) + ")";
  }
  return fs::path(symbol.file).filename().string();
}

std::vector<DefinedSymbol> parse_nm(const std::string &text, bool shared) {
  std::vector<DefinedSymbol> symbols;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space < 3 || line[space - 2] != ' ') {
      continue;
    }
    char type = line[space - 1];
    size_t colon = line.rfind(':', space - 2);
    if (colon == std::string::npos || type == 'U' || type == 'N' || type == 'A') {
      continue; // undefined, debugging, or absolute (a symbol version's own name)
    }
    DefinedSymbol symbol;
    symbol.file = line.substr(0, colon);
    symbol.name = line.substr(space + 1);
    symbol.name = symbol.name.substr(0, symbol.name.find('@'));
    symbol.weak = type == 'W' || type == 'V' || type == 'w' || type == 'v' || type == 'u';
    symbol.shared = shared;
    if (!symbol.name.empty()) {
      symbols.push_back(std::move(symbol));
    }
  }
  return symbols;
}

std::vector<ReferencedSymbol> parse_nm_undefined(const std::string &text) {
  std::vector<ReferencedSymbol> symbols;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space < 3 || line[space - 1] != 'U' ||
        line[space - 2] != ' ') {
      continue;
    }
    size_t colon = line.rfind(':', space - 2);
    if (colon == std::string::npos) {
      continue;
    }
    std::string name = line.substr(space + 1);
    name = name.substr(0, name.find('@'));
    if (!name.empty()) {
      symbols.push_back({line.substr(0, colon), name});
    }
  }
  return symbols;
}

std::string forbidden_reference(const std::string &name) {
  static const std::set<std::string> profiler = {"cudaProfilerStart", "cudaProfilerStop",
                                                 "cuProfilerStart", "cuProfilerStop"};
  // A driver entry point (cudaGetDriverEntryPoint, cuGetProcAddress) stays allowed: a TMA kernel
  // fetches cuTensorMapEncodeTiled so, and what it calls through one is the driver API, which
  // the tracer sees like any other call (a profiler stop out of turn included).
  static const std::set<std::string> lookup = {"dlopen", "dlmopen", "dlsym", "dlvsym"};
  if (profiler.count(name) != 0) {
    return "the timed range is the harness timer's to start and stop";
  }
  if (name.rfind("cupti", 0) == 0) {
    return "CUPTI is the tracer's that times the runs";
  }
  if (lookup.count(name) != 0) {
    return "a function looked up at run time would escape this check";
  }
  return "";
}

namespace {

// Shared beats strong, strong beats weak: the definer that makes the strongest case.
int strength(const DefinedSymbol &s) { return s.shared ? 2 : s.weak ? 0 : 1; }

} // namespace

std::vector<Interposition> interpositions(const std::vector<DefinedSymbol> &candidate,
                                          const std::vector<DefinedSymbol> &others) {
  std::map<std::string, const DefinedSymbol *> strongest;
  for (const auto &s : others) {
    const DefinedSymbol *&at = strongest[s.name];
    if (at == nullptr || strength(s) > strength(*at)) {
      at = &s;
    }
  }
  std::map<std::string, const DefinedSymbol *> own; // a strong definition beats a weak one
  for (const auto &s : candidate) {
    const DefinedSymbol *&at = own[s.name];
    if (at == nullptr || (at->weak && !s.weak)) {
      at = &s;
    }
  }
  std::vector<Interposition> refused;
  for (const auto &[name, mine] : own) {
    auto other = strongest.find(name);
    if (other == strongest.end()) {
      continue;
    }
    const DefinedSymbol &theirs = *other->second;
    if (theirs.shared || !mine->weak || !theirs.weak) {
      refused.push_back({*mine, theirs});
    }
  }
  return refused;
}

} // namespace kopt::buildinfo
