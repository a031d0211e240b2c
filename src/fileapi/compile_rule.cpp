#include "fileapi/compile_rule.hpp"

#include "fileapi/import.hpp"
#include "util/read_file.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace kopt::fileapi {

namespace fs = std::filesystem;

namespace {

// cmGlobalNinjaGenerator::EncodeRuleName: rule names keep [A-Za-z0-9_], the rest as ".XX".
std::string encode_rule_name(const std::string &name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), ".%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out;
}

// The arguments of a rule command that the rule adds itself: no compiler, no placeholders
// ($DEFINES, $(CXX_FLAGS), <SOURCE>), no -c, -o, -MD/-MT/-MF and their values.
std::vector<std::string> own_arguments(const std::string &command) {
  std::vector<std::string> args = split_fragment(command);
  std::vector<std::string> out;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "-o" || a == "-MT" || a == "-MF") {
      ++i;
    } else if (a == "-c" || a == "-MD" || a.find('$') != std::string::npos) {
      continue;
    } else {
      out.push_back(a);
    }
  }
  return out;
}

std::optional<CompileRule> from_ninja(const fs::path &rules, const Target &target,
                                      const std::string &language, const std::string &config) {
  std::error_code ec;
  if (!fs::exists(rules, ec)) {
    return std::nullopt;
  }
  std::istringstream in(util::read_file(rules));
  std::string prefix = language + "_COMPILER__" + encode_rule_name(target.name) + "_";
  std::vector<std::string> names = {"rule " + prefix + config,
                                    "rule " + prefix + "unscanned_" + config};
  std::string line;
  bool in_rule = false;
  while (std::getline(in, line)) {
    if (line.rfind("rule ", 0) == 0) {
      in_rule = std::find(names.begin(), names.end(), line) != names.end();
    } else if (in_rule && line.rfind("  command = ", 0) == 0) {
      return CompileRule{rules.string(), own_arguments(line.substr(12))};
    }
  }
  return std::nullopt;
}

std::optional<CompileRule> from_makefile(const fs::path &build_make, const std::string &language) {
  std::error_code ec;
  if (!fs::exists(build_make, ec)) {
    return std::nullopt;
  }
  std::istringstream in(util::read_file(build_make));
  std::string line;
  std::string flags = "$(" + language + "_FLAGS)";
  while (std::getline(in, line)) {
    size_t at = line.find(flags);
    if (line.rfind("\t", 0) == 0 && at != std::string::npos) {
      // "\t$(CMAKE_COMMAND) ... && /usr/bin/nvcc $(CUDA_DEFINES) ...": the compiler's part.
      size_t start = line.rfind("&& ", at);
      std::string command = line.substr(start == std::string::npos ? 1 : start + 3);
      return CompileRule{build_make.string(), own_arguments(command)};
    }
  }
  return std::nullopt;
}

} // namespace

bool CompileRule::separable() const {
  for (const auto &a : arguments) {
    if (a == "-rdc=true" || a == "--relocatable-device-code=true" || a == "-fgpu-rdc") {
      return true;
    }
  }
  return false;
}

std::optional<CompileRule> read_compile_rule(const CodeModel &model, const Target &target,
                                             const std::string &language,
                                             const std::string &config) {
  if (model.generator.find("Ninja") != std::string::npos) {
    return from_ninja(model.build_dir / "CMakeFiles" / "rules.ninja", target, language, config);
  }
  if (model.generator.find("Makefiles") != std::string::npos) {
    return from_makefile(fs::path(target.build_dir) / "CMakeFiles" / (target.name + ".dir") /
                             "build.make",
                         language);
  }
  return std::nullopt;
}

} // namespace kopt::fileapi
