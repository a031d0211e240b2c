#include "buildinfo/resource_usage.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <regex>

namespace kopt::buildinfo {

namespace {

// One line of a tool's output, without its line end, and `source:N`, its place for errors.
struct Line {
  std::string text;
  std::string where;
};

std::vector<Line> lines_of(std::string_view text, const std::string &source) {
  std::vector<Line> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.push_back({std::string(line), source + ":" + std::to_string(lines.size() + 1)});
    start = end + 1;
  }
  return lines;
}

long number(const std::smatch &m, size_t i, const std::string &where) {
  return static_cast<long>(util::parse_int(m[i].str(), where));
}

} // namespace

int KernelResources::max_warps_by_registers() const {
  if (registers <= 0) {
    return -1;
  }
  int per_warp = (registers * 32 + 255) / 256 * 256;
  return std::min(64, 65536 / per_warp);
}

std::vector<KernelResources> parse_ptxas_verbose(std::string_view text, const std::string &source) {
  static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<KernelResources> out;
  for (const auto &[line, where] : lines_of(text, source)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      KernelResources k;
      k.kernel = m[1];
      k.arch = m[2];
      out.push_back(k);
      continue;
    }
    if (out.empty()) {
      continue;
    }
    KernelResources &k = out.back();
    if (std::regex_search(line, m, frame)) {
      k.stack_bytes = number(m, 1, where + ": stack frame");
      k.spill_store_bytes = number(m, 2, where + ": spill stores");
      k.spill_load_bytes = number(m, 3, where + ": spill loads");
    }
    if (std::regex_search(line, m, used)) {
      k.registers = static_cast<int>(number(m, 1, where + ": registers"));
      k.shared_bytes = 0; // ptxas names smem on this line only when the kernel has some
      if (std::regex_search(line, m, barriers)) {
        k.barriers = static_cast<int>(number(m, 1, where + ": barriers"));
      }
      if (std::regex_search(line, m, smem)) {
        k.shared_bytes = number(m, 1, where + ": smem");
      }
    }
  }
  for (const auto &k : out) {
    if (k.registers < 0) {
      throw Error(source + ": kernel " + k.kernel +
                  ": no 'Used N registers' line (is this "
                  "complete -Xptxas -v output?)");
    }
  }
  return out;
}

std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text,
                                                            const std::string &source) {
  static const std::regex arch(R"(^arch = (\S+))");
  static const std::regex function(R"(^\s*Function ([^:\s]+):\s*$)");
  static const std::regex field(R"(([A-Z_]+)(?:\[\d+\])?:(\d+))");
  std::vector<KernelResources> out;
  std::string current_arch;
  bool expect_fields = false;
  for (const auto &[line, where] : lines_of(text, source)) {
    std::smatch m;
    if (std::regex_search(line, m, arch)) {
      current_arch = m[1];
      continue;
    }
    if (std::regex_search(line, m, function)) {
      KernelResources k;
      k.kernel = m[1];
      k.arch = current_arch;
      out.push_back(k);
      expect_fields = true;
      continue;
    }
    if (!expect_fields) {
      continue;
    }
    expect_fields = false;
    KernelResources &k = out.back();
    for (auto it = std::sregex_iterator(line.begin(), line.end(), field);
         it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[1];
      long value = number(*it, 2, where + ": " + name);
      if (name == "REG") {
        k.registers = static_cast<int>(value);
      } else if (name == "STACK") {
        k.stack_bytes = value;
      } else if (name == "SHARED") {
        k.shared_bytes = value;
      } else if (name == "LOCAL") {
        k.local_bytes = value;
      }
    }
    if (k.registers < 0) {
      throw Error(where + ": REG: expected 'REG:<n> STACK:<n> SHARED:<n> ...' after Function " +
                  k.kernel + ", got '" + line + "'");
    }
  }
  return out;
}

std::vector<KernelResources> parse_amdgpu_resource_remarks(std::string_view text,
                                                           const std::string &source) {
  // clang/hipcc: `<file>:<line>:<col>: remark: <Key>: <value> [-Rpass-analysis=...]`;
  // llc: `remark: <file>:<line>:<col>: <Key>: <value>`.
  static const std::regex remark(
      R"((?:remark: .*?:\d+:\d+:|:\d+:\d+: remark:)\s*([^:\[]+?)\s*(?:\[[^\]]*\])?: (\S+)(?: \[-Rpass-analysis=kernel-resource-usage\])?\s*$)");
  std::vector<KernelResources> out;
  for (const auto &[line, place] : lines_of(text, source)) {
    std::smatch m;
    if (!std::regex_search(line, m, remark)) {
      continue;
    }
    std::string key = m[1];
    std::string value = m[2];
    std::string where = place + ": " + key;
    if (key == "Function Name") {
      KernelResources k;
      k.kernel = value;
      out.push_back(k);
      continue;
    }
    if (out.empty()) {
      throw Error(where + ": a resource remark before any 'Function Name' remark");
    }
    KernelResources &k = out.back();
    auto as_int = [&] { return static_cast<long>(util::parse_int(value, where)); };
    if (key == "VGPRs") {
      k.registers = static_cast<int>(as_int());
    } else if (key == "SGPRs" || key == "TotalSGPRs") {
      k.sgprs = static_cast<int>(as_int());
    } else if (key == "ScratchSize") {
      k.stack_bytes = as_int();
    } else if (key == "VGPRs Spill") {
      k.spill_store_bytes = as_int();
    } else if (key == "LDS Size") {
      k.shared_bytes = as_int();
    } else if (key == "Occupancy") {
      k.occupancy_waves = static_cast<int>(as_int());
    }
  }
  return out;
}

std::string demangle(const std::string &mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void *)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

} // namespace kopt::buildinfo
