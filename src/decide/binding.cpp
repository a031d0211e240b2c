#include "decide/binding.hpp"

#include "buildinfo/disassembly.hpp"
#include "buildinfo/resource_usage.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

namespace kopt::decide {

namespace fs = std::filesystem;
namespace bi = buildinfo;

namespace {

// The global symbols one object defines, and those it uses without defining.
struct ObjectSymbols {
  std::vector<bi::DefinedSymbol> defined;
  std::set<std::string> used;
};

// What the built object defines that the baseline's compile does not (`added`), each a problem
// when the baseline's compile calls it: the candidate's header gave it a body.
std::vector<std::string> called_definitions(const BindingPair &pair, const std::string &changed_by,
                                            std::map<std::string, ObjectSymbols> &symbols,
                                            std::vector<bi::DefinedSymbol> &added) {
  std::set<std::string> defined;
  for (const auto &s : symbols[pair.baseline].defined) {
    defined.insert(s.name);
  }
  const std::set<std::string> &called = symbols[pair.baseline].used;
  std::vector<std::string> problems;
  for (const auto &s : symbols[pair.built].defined) {
    if (defined.count(s.name) != 0) {
      continue;
    }
    if (called.count(s.name) != 0) {
      problems.push_back(fs::path(pair.object).filename().string() + " defines " +
                         bi::demangle(s.name) + " with " + changed_by +
                         ", which it calls with the baseline's: a candidate's header gives a "
                         "body to what harness code calls");
    } else {
      added.push_back(s);
    }
  }
  return problems;
}

// Each pair's global symbols (one `nm -A -g` over every object): `problem` is set on failure.
std::map<std::string, ObjectSymbols> pair_symbols(const std::vector<BindingPair> &pairs,
                                                  util::ProcessRunner &runner,
                                                  std::string &problem) {
  util::Command command{{"nm", "-A", "-g"}, {}, {}, 120};
  for (const auto &pair : pairs) {
    command.argv.insert(command.argv.end(), {pair.built, pair.baseline});
  }
  util::ProcessResult result = runner.run(command);
  if (!result.ok() && result.out.empty()) {
    problem = "`nm -g` " + result.describe(120) + ": " + std::string(util::trim(result.err));
    return {};
  }
  std::map<std::string, ObjectSymbols> symbols;
  for (auto &s : bi::parse_nm(result.out, false)) {
    symbols[s.file].defined.push_back(std::move(s));
  }
  for (const auto &s : bi::parse_nm_undefined(result.out)) {
    symbols[s.file].used.insert(s.name);
  }
  return symbols;
}

// The first function of a pair whose code the candidate's headers change, as a problem ("" when
// none does).
std::string code_problem(const BindingPair &pair, const std::string &changed_by,
                         const util::ProcessResult &built, const util::ProcessResult &baseline) {
  if (!built.ok() || !baseline.ok()) {
    return "cannot disassemble " + pair.object + ": `objdump` " +
           (built.ok() ? baseline : built).describe(300);
  }
  std::vector<bi::CodeChange> changes =
      bi::code_changes(bi::parse_objdump(baseline.out), bi::parse_objdump(built.out));
  if (changes.empty()) {
    return "";
  }
  return fs::path(pair.object).filename().string() + " compiles differently with " + changed_by +
         " than with the baseline's: " + bi::demangle(changes.front().function) + " " +
         bi::describe(changes.front()) +
         ": a declaration of the candidate changes what harness code calls";
}

} // namespace

std::vector<std::string> binding_problems(const std::vector<BindingPair> &pairs,
                                          const std::string &changed_by,
                                          const LinkedSymbols &linked,
                                          util::ProcessRunner &runner) {
  if (pairs.empty()) {
    return {};
  }
  std::vector<util::Command> runs;
  for (const auto &pair : pairs) {
    runs.insert(runs.end(), {bi::objdump_command(pair.built), bi::objdump_command(pair.baseline)});
  }
  std::vector<util::ProcessResult> results = runner.run_all(runs, 0);
  std::string problem;
  std::map<std::string, ObjectSymbols> symbols = pair_symbols(pairs, runner, problem);
  std::vector<std::string> problems;
  if (!problem.empty()) {
    problems.push_back("cannot read the symbols of the harness objects: " + problem);
  }
  std::vector<std::pair<const BindingPair *, bi::DefinedSymbol>> added;
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::string changed = code_problem(pairs[i], changed_by, results[2 * i], results[2 * i + 1]);
    if (!changed.empty()) {
      problems.push_back(changed);
    }
    std::vector<bi::DefinedSymbol> own_added;
    for (auto &found : called_definitions(pairs[i], changed_by, symbols, own_added)) {
      problems.push_back(std::move(found));
    }
    for (auto &s : own_added) {
      added.emplace_back(&pairs[i], std::move(s));
    }
  }
  if (added.empty()) {
    return problems;
  }
  std::vector<bi::DefinedSymbol> others = linked(problem);
  if (!problem.empty()) {
    problems.push_back(problem);
  }
  for (const auto &[pair, symbol] : added) {
    std::vector<bi::DefinedSymbol> rest;
    const auto &built = pair->built; // a structured binding is not captured (clang 14)
    std::copy_if(others.begin(), others.end(), std::back_inserter(rest),
                 [&](const bi::DefinedSymbol &s) { return s.file != built; });
    for (const auto &refused : bi::interpositions({symbol}, rest)) {
      problems.push_back(fs::path(pair->object).filename().string() + " defines " +
                         bi::demangle(symbol.name) + " with " + changed_by + ", and so does " +
                         bi::definer(refused.other) +
                         ": a candidate's header may not define what the harness links");
    }
  }
  return problems;
}

} // namespace kopt::decide
