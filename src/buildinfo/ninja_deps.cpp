#include "buildinfo/ninja_deps.hpp"

#include "util/text.hpp"

#include <cctype>
#include <sstream>
#include <string_view>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

NinjaDeps parse_ninja_deps(const std::string &text, const fs::path &build_dir) {
  NinjaDeps deps;
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> *current = nullptr;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      current = nullptr;
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (current) {
        fs::path path(std::string(util::trim(line)));
        current->push_back((path.is_absolute() ? path : build_dir / path).lexically_normal());
      }
      continue;
    }
    size_t colon = line.find(": #deps");
    if (colon == std::string::npos) {
      current = nullptr;
      continue;
    }
    current = &deps[line.substr(0, colon)];
  }
  return deps;
}

bool ninja_depfile_can_hold(const std::string &path) {
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && u < 0x80 &&
        std::string_view("+,/_:.~()}{%=@[]!- #$").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string ninja_depfile_word(const fs::path &path, const fs::path &build_dir) {
  std::string text = path.string();
  if (!ninja_depfile_can_hold(text) && path.is_absolute()) {
    std::string relative = path.lexically_relative(build_dir).string();
    if (!relative.empty() && ninja_depfile_can_hold(relative)) {
      text = relative;
    }
  }
  std::string out;
  for (char c : text) {
    if (c == ' ' || c == '#') {
      out += '\\';
    } else if (c == '$') {
      out += '$';
    }
    out += c;
  }
  return out;
}

namespace {

bool under(const std::string &path, const fs::path &dir) {
  std::string prefix = dir.lexically_normal().string();
  if (!prefix.empty() && prefix.back() != '/') {
    prefix += '/';
  }
  return fs::path(path).lexically_normal().string().rfind(prefix, 0) == 0;
}

} // namespace

IdentityCheck check_identity(const NinjaDeps &deps, const std::string &target,
                             const fs::path &gen_root, const fs::path &gen_dir,
                             const std::string &header, const std::vector<fs::path> &foreign) {
  IdentityCheck check;
  std::string marker = "/" + target + ".dir/";
  // An IMPORTED family compiles a candidate's instance TUs in a target of their own.
  std::string instances_marker = "/" + target + "_instances.dir/";
  fs::path own_header = (gen_dir / "src" / header).lexically_normal();
  bool read_own_header = false;
  for (const auto &[object, inputs] : deps) {
    if (("/" + object).find(marker) == std::string::npos &&
        ("/" + object).find(instances_marker) == std::string::npos) {
      continue;
    }
    ++check.objects;
    for (const auto &input : inputs) {
      fs::path normal = fs::path(input).lexically_normal();
      if (normal == own_header) {
        read_own_header = true;
      }
      bool bad = under(input, gen_root) && !under(input, gen_dir);
      for (const auto &dir : foreign) {
        bad = bad || under(input, dir);
      }
      if (bad) {
        check.problems.push_back(object + " was compiled from " + input +
                                 ", not from this candidate's sources in " + gen_dir.string());
      }
    }
  }
  if (check.objects == 0) {
    check.problems.push_back("ninja recorded no dependencies for target " + target +
                             " (not built yet, or not built by ninja)");
  } else if (!read_own_header) {
    std::string problem = "no object of " + target + " read " + own_header.string();
    if (!ninja_depfile_can_hold(own_header.string())) {
      // The launcher names it relative to the build folder then, which fails only when such a
      // character lies below the folder the two share.
      problem += " (ninja's depfiles cannot name a path that holds a quote, `;`, `&`, `|`, `*`, "
                 "`?`, `<`, `>`, a backslash or a control character unless it is relative to the "
                 "build folder: keep such characters out of the folders below the one the build "
                 "and state folders share)";
    }
    check.problems.push_back(problem);
  }
  check.ok = check.problems.empty();
  return check;
}

} // namespace kopt::buildinfo
