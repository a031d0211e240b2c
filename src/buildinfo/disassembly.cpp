#include "buildinfo/disassembly.hpp"

#include "buildinfo/resource_usage.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

namespace kopt::buildinfo {

namespace {

// `0000000000000040 <name>:` opens a function; returns its name, or "".
std::string function_header(const std::string &line) {
  size_t open = line.find(" <");
  if (open == std::string::npos || !line.ends_with(">:") || !util::is_hex(line.substr(0, open))) {
    return "";
  }
  return line.substr(open + 2, line.size() - open - 4);
}

// `  1b: R_X86_64_PLT32 sym-0x4`: the address of a relocation taken out; "" when `text` (an
// instruction's own part, or a line of its own) holds none.
std::string relocation(const std::string &text) {
  size_t r = text.find(": R_");
  if (r == std::string::npos || !util::is_hex(std::string(util::trim(text.substr(0, r))))) {
    return "";
  }
  return text.substr(r + 2);
}

// nvcc names a TU's own symbols by a temporary file of its run (`tmpxft_0001a2b3_00000000-6_`):
// that part taken out, two compiles of one TU name them the same.
std::string stable_names(const std::string &text) {
  static const std::regex temporary("tmpxft_[0-9a-f]+_[0-9a-f]+-[0-9]+_");
  return text.find("tmpxft_") == std::string::npos ? text
                                                   : std::regex_replace(text, temporary, "tmpxft_");
}

// An instruction with its address and the addresses it prints beside a symbol taken out, the
// offsets of section-relative relocations and the numbers of local labels too.
std::string normalise(std::string text) {
  static const std::regex address("\\b[0-9a-f]+ <");
  static const std::regex section_offset("([\\s,])(\\.[A-Za-z_.]+)[+-]0x[0-9a-f]+");
  static const std::regex local_label("\\.L[A-Za-z]*[0-9]+");
  static const std::regex spaces("\\s+");
  text = std::regex_replace(text, address, "<");
  text = std::regex_replace(text, section_offset, "$1$2");
  text = std::regex_replace(text, local_label, ".L");
  return stable_names(std::regex_replace(text, spaces, " "));
}

// Adds a relocation to its instruction. What objdump names beside a relocated operand is a
// guess from an unlinked address (often another function's): the relocation names the target.
void attach(std::string &instruction, const std::string &reloc) {
  static const std::regex guess(" ?(# )?<[^>]*>");
  instruction = std::regex_replace(instruction, guess, "") + " " + normalise(reloc);
}

// An instruction that only pads a function's end to the next one's alignment, which depends
// on where the function lies: `nopw 0x0(%rax,%rax,1)`, `xchg %ax,%ax`, `int3`, `data16 cs nopw`.
bool padding(const std::string &instruction) {
  static const std::regex pad("((data16|cs|ds|fs) )*(nop[wlq]?|xchg %ax,%ax|int3)\\b.*");
  return std::regex_match(instruction, pad);
}

} // namespace

util::Command objdump_command(const std::string &object) {
  return {{"objdump", "-d", "-r", "-w", "--no-show-raw-insn", object}, {}, {}, 300};
}

Functions parse_objdump(const std::string &text) {
  Functions functions;
  std::vector<std::string> *code = nullptr;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (std::string name = function_header(line); !name.empty()) {
      code = &functions[stable_names(name)];
      code->clear();
      continue;
    }
    if (line.find("file format") != std::string::npos || line.starts_with("Disassembly of")) {
      code = nullptr;
      continue;
    }
    if (code == nullptr) {
      continue;
    }
    size_t colon = line.find(":\t");
    if (colon == std::string::npos ||
        !util::is_hex(std::string(util::trim(line.substr(0, colon))))) {
      if (std::string own = relocation(line); !own.empty() && !code->empty()) {
        attach(code->back(), own); // a relocation on a line of its own (no -w)
      }
      continue;
    }
    std::string instruction = line.substr(colon + 2);
    std::string reloc;
    // `-w` prints an instruction's relocations after it, on the same line.
    if (size_t at = instruction.find(": R_"); at != std::string::npos) {
      size_t start = instruction.rfind('\t', at);
      if (start != std::string::npos) {
        reloc = relocation(instruction.substr(start + 1));
        instruction.erase(start);
      }
    }
    code->push_back(normalise(instruction));
    if (!reloc.empty()) {
      attach(code->back(), reloc);
    }
  }
  for (auto &[name, instructions] : functions) {
    while (!instructions.empty() && padding(instructions.back())) {
      instructions.pop_back();
    }
  }
  return functions;
}

std::vector<std::string> callees(const std::vector<std::string> &code) {
  static const std::regex reloc("R_[A-Z0-9_]+ ([^\\s+-]+)");
  static const std::regex call("(?:call|jmp|bl|b)q? +<([^>+]+)>");
  std::set<std::string> names;
  for (const auto &line : code) {
    for (const auto *pattern : {&reloc, &call}) {
      for (std::sregex_iterator it(line.begin(), line.end(), *pattern), end; it != end; ++it) {
        std::string name = (*it)[1];
        if (!name.empty() && name[0] != '.') {
          names.insert(name);
        }
      }
    }
  }
  return {names.begin(), names.end()};
}

std::vector<CodeChange> code_changes(const Functions &baseline, const Functions &candidate) {
  std::vector<CodeChange> changes;
  for (const auto &[name, code] : baseline) {
    auto theirs = candidate.find(name);
    if (theirs == candidate.end()) {
      changes.push_back({name, true, callees(code), {}});
      continue;
    }
    if (theirs->second == code) {
      continue;
    }
    CodeChange change{name, false, {}, {}};
    std::vector<std::string> before = callees(code), after = callees(theirs->second);
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(change.dropped));
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(change.added));
    changes.push_back(std::move(change));
  }
  return changes;
}

std::string describe(const CodeChange &change) {
  auto names = [](const std::vector<std::string> &symbols) {
    std::vector<std::string> out;
    for (const auto &s : symbols) {
      out.push_back(demangle(s));
    }
    return util::join(out, ", ");
  };
  if (change.missing) {
    return "is not compiled";
  }
  if (!change.added.empty() && !change.dropped.empty()) {
    return "refers to " + names(change.added) + " instead of " + names(change.dropped);
  }
  if (!change.dropped.empty()) {
    return "no longer refers to " + names(change.dropped);
  }
  if (!change.added.empty()) {
    return "refers to " + names(change.added);
  }
  return "compiles to other instructions";
}

} // namespace kopt::buildinfo
