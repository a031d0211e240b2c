#include "decide/identity.hpp"

#include "decide/binding.hpp"

#include "buildinfo/disassembly.hpp"
#include "buildinfo/expansion.hpp"
#include "buildinfo/resource_usage.hpp"
#include "buildinfo/symbols.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace kopt::decide {

namespace fs = std::filesystem;
namespace bi = buildinfo;

namespace {

/// The candidate target's objects as ninja names them, split into instance TUs and the rest.
struct TargetObjects {
  std::vector<std::string> instances;
  std::vector<std::string> others;
};

TargetObjects target_objects(const bi::NinjaDeps &deps, const std::string &target) {
  TargetObjects objects;
  for (const auto &[object, inputs] : deps) {
    std::string path = "/" + object;
    if (path.find("/" + target + ".dir/") == std::string::npos &&
        path.find("/" + target + "_instances.dir/") == std::string::npos) {
      continue;
    }
    (path.find("/instances/") != std::string::npos ? objects.instances : objects.others)
        .push_back(object);
  }
  return objects;
}

// A file's text, "" when it is missing (a generated source not generated yet).
std::string read_text(const fs::path &path) {
  std::error_code ec;
  return fs::exists(path, ec) ? util::read_file(path) : "";
}

// `candidates/84`: the candidate's folder as the user's tree names it.
std::string folder_of(const candidate::CandidateSet &candidates, const std::string &id) {
  fs::path dir = candidates.get(id).dir;
  return (dir.parent_path().filename() / dir.filename()).string();
}

// The editable file that spells the symbol's own name, when exactly one does (a name made by
// token pasting spells nowhere: then the object is named instead).
std::string spelling_file(const spec::Family &family, const fs::path &gen_dir,
                          const std::string &demangled) {
  std::string name = demangled.substr(0, demangled.find('('));
  size_t colons = name.rfind("::");
  name = colons == std::string::npos ? name : name.substr(colons + 2);
  if (!util::is_identifier(name)) {
    return "";
  }
  std::regex word("\\b" + name + "\\b");
  std::vector<std::string> spelled;
  for (const auto &editable : family.editable) {
    if (std::regex_search(read_text(gen_dir / "src" / editable), word)) {
      spelled.push_back(editable);
    }
  }
  return spelled.size() == 1 ? spelled[0] : "";
}

std::vector<std::string> absolute_all(const std::vector<std::string> &objects,
                                      const fs::path &build_dir) {
  std::vector<std::string> out;
  for (const auto &object : objects) {
    fs::path path(object);
    out.push_back((path.is_absolute() ? path : build_dir / path).lexically_normal().string());
  }
  return out;
}

// Runs `nm` over `files` (none: no run); `problem` is set when it fails.
std::vector<bi::DefinedSymbol> run_nm(const std::vector<std::string> &files, bool shared,
                                      util::ProcessRunner &runner, std::string &problem) {
  if (files.empty()) {
    return {};
  }
  util::Command command{{"nm", "-A", "-g", "--defined-only"}, {}, {}, 120};
  if (shared) {
    command.argv.push_back("-D");
  }
  command.argv.insert(command.argv.end(), files.begin(), files.end());
  util::ProcessResult result = runner.run(command);
  if (!result.ok() && result.out.empty()) {
    problem = "`nm` " + result.describe(120) + ": " + std::string(util::trim(result.err));
    return {};
  }
  return bi::parse_nm(result.out, shared);
}

// The symbols `files` (objects) use without defining them (`nm -A -u`).
std::vector<bi::ReferencedSymbol> run_nm_undefined(const std::vector<std::string> &files,
                                                   util::ProcessRunner &runner,
                                                   std::string &problem) {
  util::Command command{{"nm", "-A", "-u"}, {}, {}, 120};
  command.argv.insert(command.argv.end(), files.begin(), files.end());
  util::ProcessResult result = runner.run(command);
  if (!result.ok() && result.out.empty()) {
    problem = "`nm -u` " + result.describe(120) + ": " + std::string(util::trim(result.err));
    return {};
  }
  return bi::parse_nm_undefined(result.out);
}

// The harness binary's link inputs other than the candidate's instance objects.
struct OtherInputs {
  std::vector<std::string> statics; ///< objects and archives
  std::vector<std::string> shared;
  std::string problem;
};

OtherInputs other_inputs(const spec::Layout &layout, const IdentityScope &scope,
                         const std::set<std::string> &instances, util::ProcessRunner &runner) {
  OtherInputs inputs;
  fs::path build_dir = fs::absolute(scope.build_dir);
  fs::path binary = layout.harness(scope.id);
  // The whole chain, not -s: the target is a phony, whose own edge has no command.
  util::Command commands{
      {"ninja", "-C", scope.build_dir, "-t", "commands", scope.target}, {}, {}, 120};
  util::ProcessResult link = runner.run(commands);
  if (!link.ok()) {
    inputs.problem = "`ninja -t commands " + scope.target + "` " + link.describe(120);
    return inputs;
  }
  bi::LinkInputs parsed = bi::parse_link_command(link.out, binary.filename().string(), build_dir);
  if (parsed.objects.empty()) {
    inputs.problem =
        "ninja names no link of " + binary.filename().string() + " for target " + scope.target;
    return inputs;
  }
  std::set<std::string> seen = instances;
  auto add = [&](const fs::path &path, std::vector<std::string> &to) {
    if (seen.insert(path.string()).second) {
      to.push_back(path.string());
    }
  };
  for (const auto &path : parsed.objects) {
    add(path, inputs.statics);
  }
  for (const auto &path : parsed.archives) {
    add(path, inputs.statics);
  }
  for (const auto &path : bi::static_libraries(parsed)) {
    add(path, inputs.statics);
  }
  for (const auto &path : parsed.shared) {
    add(path, inputs.shared);
  }
  util::ProcessResult ldd = runner.run({{"ldd", binary.string()}, {}, {}, 60});
  if (!ldd.ok()) {
    inputs.problem = "`ldd " + binary.string() + "` " + ldd.describe(60);
    return inputs;
  }
  for (const auto &path : bi::parse_ldd(ldd.out)) {
    add(path, inputs.shared);
  }
  return inputs;
}

// Every global symbol the harness binary's link inputs other than `instances` define (objects,
// archives and shared libraries); `problem` is set when they cannot be read.
std::vector<bi::DefinedSymbol> linked_symbols(const spec::Layout &layout,
                                              const IdentityScope &scope,
                                              const std::vector<std::string> &instances,
                                              util::ProcessRunner &runner, std::string &problem) {
  std::set<std::string> instance_set(instances.begin(), instances.end());
  OtherInputs others = other_inputs(layout, scope, instance_set, runner);
  if (!others.problem.empty()) {
    problem = "cannot list what " + scope.target + " links: " + others.problem;
    return {};
  }
  std::vector<bi::DefinedSymbol> theirs = run_nm(others.statics, false, runner, problem);
  std::vector<bi::DefinedSymbol> shared = run_nm(others.shared, true, runner, problem);
  if (!problem.empty()) {
    problem = "cannot read the symbols " + scope.target + " links: " + problem;
    return {};
  }
  theirs.insert(theirs.end(), shared.begin(), shared.end());
  return theirs;
}

// A weak function an instance defines with another body than a harness object's copy.
struct OtherBody {
  bi::DefinedSymbol candidate;
  std::string harness_object;
};

// The weak functions an instance defines that one of `harness` (the target's own objects of the
// harness side) defines too, with another body there: the linker keeps one copy for both, so
// the harness's calls could run the candidate's. Only code is compared (objdump).
std::vector<OtherBody> other_bodies(const std::vector<bi::DefinedSymbol> &own,
                                    const std::vector<bi::DefinedSymbol> &theirs,
                                    const std::vector<std::string> &harness,
                                    util::ProcessRunner &runner, std::string &problem) {
  std::set<std::string> harness_set(harness.begin(), harness.end());
  std::map<std::string, std::string> harness_copy; // name -> the harness object defining it
  for (const auto &s : theirs) {
    if (s.weak && harness_set.count(s.file) != 0) {
      harness_copy.emplace(s.name, s.file);
    }
  }
  std::vector<OtherBody> shared;
  std::set<std::string> files;
  for (const auto &s : own) {
    auto copy = harness_copy.find(s.name);
    if (s.weak && copy != harness_copy.end()) {
      shared.push_back({s, copy->second});
      files.insert({s.file, copy->second});
    }
  }
  std::vector<std::string> names(files.begin(), files.end());
  std::vector<util::Command> runs;
  std::transform(names.begin(), names.end(), std::back_inserter(runs), bi::objdump_command);
  std::vector<util::ProcessResult> results = runner.run_all(runs, 0);
  std::map<std::string, bi::Functions> code;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!results[i].ok()) {
      problem = "`objdump -d " + names[i] + "` " + results[i].describe(300);
      return {};
    }
    code[names[i]] = bi::parse_objdump(results[i].out);
  }
  std::vector<OtherBody> differ;
  std::set<std::string> named; // each name once, in the first instance whose copy differs
  for (const auto &body : shared) {
    if (named.count(body.candidate.name) != 0) {
      continue;
    }
    const bi::Functions &mine = code[body.candidate.file],
                        &harness_code = code[body.harness_object];
    auto a = mine.find(body.candidate.name), b = harness_code.find(body.candidate.name);
    if (a != mine.end() && b != harness_code.end() && a->second != b->second) {
      differ.push_back(body); // data (a weak variable, a vtable) is not compared
      named.insert(body.candidate.name);
    }
  }
  return differ;
}

} // namespace

std::vector<std::string> symbol_problems(const spec::Family &family,
                                         const candidate::CandidateSet &candidates,
                                         const spec::Layout &layout, const IdentityScope &scope,
                                         const bi::NinjaDeps &deps, util::ProcessRunner &runner) {
  fs::path build_dir = fs::absolute(scope.build_dir);
  TargetObjects objects = target_objects(deps, scope.target);
  std::vector<std::string> instances = absolute_all(objects.instances, build_dir);
  if (instances.empty()) {
    return {}; // check_identity already says that nothing was built
  }
  std::string problem;
  std::vector<bi::DefinedSymbol> theirs = linked_symbols(layout, scope, instances, runner, problem);
  if (!problem.empty()) {
    return {problem};
  }
  std::vector<bi::DefinedSymbol> own = run_nm(instances, false, runner, problem);
  std::vector<bi::ReferencedSymbol> used = run_nm_undefined(instances, runner, problem);
  if (!problem.empty()) {
    return {"cannot read the symbols " + scope.target + " links: " + problem};
  }
  std::vector<std::string> problems;
  std::string folder = folder_of(candidates, scope.id);
  fs::path gen_dir = layout.gen_dir(scope.id);
  for (const auto &refused : bi::interpositions(own, theirs)) {
    std::string name = bi::demangle(refused.candidate.name);
    fs::path object(refused.candidate.file);
    std::string instance = object.stem().stem().string(); // gemm_16x16.cpp.o -> gemm_16x16
    std::string file = spelling_file(family, gen_dir, name);
    std::string where = file.empty() ? "object " + object.lexically_relative(build_dir).string()
                                     : file + ", in instance " + instance + "'s object";
    problems.push_back("symbol " + name + " is defined in " + folder + " (" + where + ") and by " +
                       bi::definer(refused.other) + ": a candidate may define only its instances");
  }
  std::vector<OtherBody> bodies =
      other_bodies(own, theirs, absolute_all(objects.others, build_dir), runner, problem);
  if (!problem.empty()) {
    problems.push_back("cannot compare weak definitions: " + problem);
  }
  for (const auto &body : bodies) {
    std::string name = bi::demangle(body.candidate.name);
    fs::path object(body.candidate.file);
    problems.push_back("symbol " + name + " is defined in " + folder + " (object " +
                       object.lexically_relative(build_dir).string() + ") with another body than " +
                       fs::path(body.harness_object).filename().string() +
                       "'s: the linker keeps one copy for both, so harness code could run the "
                       "candidate's");
  }
  std::set<std::string> named;
  for (const auto &ref : used) {
    std::string why = bi::forbidden_reference(ref.name);
    if (why.empty() || !named.insert(ref.name).second) {
      continue;
    }
    std::string name = bi::demangle(ref.name);
    std::string file = spelling_file(family, gen_dir, name);
    fs::path object(ref.file);
    std::string instance = object.stem().stem().string();
    std::string where = file.empty() ? "object " + object.lexically_relative(build_dir).string()
                                     : file + ", in instance " + instance + "'s object";
    problems.push_back("symbol " + name + " is called from " + folder + " (" + where + "): " + why);
  }
  return problems;
}

namespace {

// The candidate's editable files that differ from the baseline's, the kernel header first.
std::vector<std::string> changed_editables(const spec::Family &family, const fs::path &own,
                                           const fs::path &base) {
  std::vector<std::string> names = family.editable;
  std::stable_partition(names.begin(), names.end(),
                        [&](const std::string &n) { return n == family.kernel_header; });
  std::vector<std::string> changed;
  for (const auto &name : names) {
    if (read_text(own / "src" / name) != read_text(base / "src" / name)) {
      changed.push_back(name);
    }
  }
  return changed;
}

// A copy of the candidate's generated folder with the baseline's editable files in src/
// (instances left out: only harness-side TUs are preprocessed against it).
void make_baseline_view(const fs::path &own, const fs::path &base, const fs::path &view) {
  fs::remove_all(view);
  fs::create_directories(view);
  for (const auto &entry : fs::directory_iterator(own)) {
    if (entry.is_regular_file()) {
      fs::copy_file(entry.path(), view / entry.path().filename());
    }
  }
  fs::copy(base / "src", view / "src", fs::copy_options::recursive);
}

// Replaces the folder `from` by `to` wherever an argument names it or a path under it.
std::string swap_folder(const std::string &arg, const std::string &from, const std::string &to) {
  std::string out;
  size_t copied = 0;
  for (size_t at = arg.find(from); at != std::string::npos; at = arg.find(from, at + 1)) {
    size_t end = at + from.size();
    if (end < arg.size() && arg[end] != '/') {
      continue;
    }
    out += arg.substr(copied, at - copied) + to;
    copied = end;
  }
  return out + arg.substr(copied);
}

// Line keys of one side: a file under `gen` is named by its path there, the editable src/
// files left out ("").
std::function<std::string(const std::string &)> line_names(const fs::path &gen,
                                                           const fs::path &cwd) {
  return [gen, cwd](const std::string &file) -> std::string {
    fs::path path(file);
    if (!file.empty() && file[0] == '<') {
      return file; // <built-in>, <command-line>
    }
    path = (path.is_absolute() ? path : cwd / path).lexically_normal();
    fs::path relative = path.lexically_relative(gen);
    if (relative.empty() || *relative.begin() == "..") {
      return path.string();
    }
    return *relative.begin() == "src" ? "" : "<gen>/" + relative.string();
  };
}

struct Preprocessed {
  bi::Expansion expansion;
  std::string problem;
};

util::Command preprocess_run(const bi::PreprocessCommand &command) {
  return {command.argv, {}, command.cwd, 300};
}

Preprocessed preprocessed(const bi::PreprocessCommand &command, const util::ProcessResult &result,
                          const fs::path &gen) {
  if (!result.ok()) {
    std::string problem(1, '`'); // GCC 12 warns (-Wrestrict, PR105651) on "`" + string
    problem += util::join(command.argv, " ");
    problem += "` " + result.describe(300) + ": " + util::excerpt(util::trim(result.err), 200);
    return {{}, problem};
  }
  return {bi::parse_expansion(result.out, line_names(gen, command.cwd)), ""};
}

// The harness side's objects that read an editable file: each one's preprocessing with the
// candidate's headers and with the baseline's (the view), and the latter's compile.
struct HarnessSide {
  std::vector<std::string> objects; ///< as ninja names them
  std::vector<bi::PreprocessCommand> own, base;
  std::vector<std::string> built_base; ///< the baseline's own object of the TU, or ""
  std::vector<std::string> problems;
};

// The baseline's own built object of the TU that `object` compiles, when it is what a compile
// with the baseline's headers would give: its compile line is `line` with the baseline's target
// and folder, it is newer than everything it read, and the generated files `object` read
// outside src/ (manifest, registry, dispatch) are the baseline's too. Else "" (compile then).
std::string built_baseline(const std::string &object, const std::string &line,
                           const IdentityScope &scope, const bi::NinjaDeps &deps,
                           const fs::path &own, const fs::path &base, util::ProcessRunner &runner) {
  fs::path build_dir = fs::absolute(scope.build_dir);
  std::string prefix = scope.target.substr(0, scope.target.size() - scope.id.size());
  auto swap = [&](const std::string &word) {
    std::string out = swap_folder(word, scope.target + ".dir", prefix + scope.baseline + ".dir");
    out = swap_folder(out, own.string(), base.string());
    return swap_folder(out, own.lexically_relative(build_dir).string(),
                       base.lexically_relative(build_dir).string());
  };
  std::string theirs = swap(object);
  auto read = deps.find(theirs);
  if (theirs == object || read == deps.end()) {
    return "";
  }
  std::string own_src = (own / "src/").string();
  for (const auto &input : deps.at(object)) {
    std::string path = fs::path(input).lexically_normal().string();
    if (path.starts_with(own.string() + "/") && !path.starts_with(own_src) &&
        read_text(path) != read_text(swap(path))) {
      return ""; // another manifest, registry or dispatch
    }
  }
  std::error_code ec;
  fs::path built = absolute_all({theirs}, build_dir)[0];
  fs::file_time_type made = fs::last_write_time(built, ec);
  for (const auto &input : read->second) {
    if (ec || fs::last_write_time(input, ec) > made) {
      return ""; // missing, or older than what it read
    }
  }
  util::ProcessResult their_line =
      runner.run({{"ninja", "-C", scope.build_dir, "-t", "commands", "-s", theirs}, {}, {}, 120});
  std::vector<std::string> words = bi::shell_words(line);
  std::transform(words.begin(), words.end(), words.begin(), swap);
  return !ec && their_line.ok() && bi::shell_words(their_line.out) == words ? built.string() : "";
}

HarnessSide harness_side(const IdentityScope &scope, const bi::NinjaDeps &deps, const fs::path &own,
                         const fs::path &base, const fs::path &view, util::ProcessRunner &runner) {
  HarnessSide side;
  fs::path build_dir = fs::absolute(scope.build_dir);
  for (const auto &object : target_objects(deps, scope.target).others) {
    bool reads_editable = false;
    for (const auto &input : deps.at(object)) {
      reads_editable = reads_editable || fs::path(input).lexically_normal().string().starts_with(
                                             (own / "src/").string());
    }
    if (!reads_editable) {
      continue;
    }
    util::ProcessResult line =
        runner.run({{"ninja", "-C", scope.build_dir, "-t", "commands", "-s", object}, {}, {}, 120});
    if (!line.ok()) {
      side.problems.push_back("`ninja -t commands -s " + object + "` " + line.describe(120));
      continue;
    }
    bi::PreprocessCommand mine = bi::preprocess_command(line.out, build_dir);
    bi::PreprocessCommand theirs = mine;
    for (auto &arg : theirs.argv) {
      arg = swap_folder(arg, own.string(), view.string());
    }
    theirs.cwd = swap_folder(theirs.cwd.string(), own.string(), view.string());
    side.objects.push_back(object);
    side.own.push_back(mine);
    side.base.push_back(theirs);
    side.built_base.push_back(built_baseline(object, line.out, scope, deps, own, base, runner));
  }
  return side;
}

// The compile of a preprocessing's TU into `object` (the same line, -E left out).
util::Command compile_run(const bi::PreprocessCommand &command, const fs::path &object) {
  util::Command run{{}, {}, command.cwd, 600};
  for (const auto &arg : command.argv) {
    if (arg != "-E") {
      run.argv.push_back(arg);
    }
  }
  run.argv.insert(run.argv.end(), {"-c", "-o", object.string()});
  return run;
}

std::string expansion_problem(const std::string &object, const bi::PreprocessCommand &own_command,
                              const util::ProcessResult &own_result,
                              const bi::PreprocessCommand &base_command,
                              const util::ProcessResult &base_result, const fs::path &own,
                              const fs::path &view, const std::string &changed_by) {
  Preprocessed with_own = preprocessed(own_command, own_result, own);
  Preprocessed with_base = preprocessed(base_command, base_result, view);
  if (!with_own.problem.empty() || !with_base.problem.empty()) {
    return "cannot preprocess " + object + ": " +
           (with_own.problem.empty() ? with_base.problem : with_own.problem);
  }
  if (auto at = bi::first_difference(with_base.expansion, with_own.expansion)) {
    return fs::path(at->first).filename().string() + ":" + std::to_string(at->second) +
           " expands differently with " + changed_by +
           " than with the baseline's: a macro of the candidate changes harness code";
  }
  return "";
}

} // namespace

std::vector<std::string> expansion_problems(const spec::Family &family, const spec::Layout &layout,
                                            const IdentityScope &scope, const bi::NinjaDeps &deps,
                                            util::ProcessRunner &runner) {
  fs::path own = layout.gen_dir(scope.id);
  fs::path base = layout.gen_dir(scope.baseline);
  if (scope.baseline.empty() || scope.baseline == scope.id || !fs::is_directory(base / "src")) {
    return {};
  }
  std::vector<std::string> changed = changed_editables(family, own, base);
  if (changed.empty()) {
    return {}; // the same headers expand and compile the same
  }
  std::string changed_by = "candidate " + scope.id + "'s " + util::join(changed, " and ");
  fs::path view = layout.root / "tmp" / ("baseline-headers-" + scope.id);
  make_baseline_view(own, base, view);
  fs::create_directories(view / "objects");
  HarnessSide side = harness_side(scope, deps, own, base, view, runner);
  std::vector<std::string> problems = side.problems;
  // Every object's two expansions and, where the baseline's own object of it is not built, its
  // compile with the baseline's headers at once: on a machine of many cores the check then
  // takes about as long as its slowest compile.
  std::vector<util::Command> runs;
  std::vector<std::string> compiled = side.built_base;
  for (size_t i = 0; i < side.objects.size(); ++i) {
    runs.insert(runs.end(), {preprocess_run(side.own[i]), preprocess_run(side.base[i])});
    if (compiled[i].empty()) {
      compiled[i] = (view / "objects" / (std::to_string(i) + ".o")).string();
      runs.push_back(compile_run(side.base[i], compiled[i]));
    }
  }
  std::vector<util::ProcessResult> results = runner.run_all(runs, 0);
  fs::path build_dir = fs::absolute(scope.build_dir);
  std::vector<BindingPair> pairs;
  for (size_t i = 0, at = 0; i < side.objects.size(); ++i) {
    const util::ProcessResult &own_result = results[at], &base_result = results[at + 1];
    const util::ProcessResult *compile = side.built_base[i].empty() ? &results[at + 2] : nullptr;
    at += compile != nullptr ? 3 : 2;
    std::string problem = expansion_problem(side.objects[i], side.own[i], own_result, side.base[i],
                                            base_result, own, view, changed_by);
    if (!problem.empty()) {
      problems.push_back(problem); // a macro explains every other difference too
    } else if (compile != nullptr && !compile->ok()) {
      problems.push_back("cannot compile " + side.objects[i] + " with the baseline's headers: " +
                         util::excerpt(util::trim(compile->err), 200));
    } else {
      pairs.push_back(
          {side.objects[i], absolute_all({side.objects[i]}, build_dir)[0], compiled[i]});
    }
  }
  std::vector<std::string> instances =
      absolute_all(target_objects(deps, scope.target).instances, build_dir);
  auto linked = [&](std::string &problem) {
    return linked_symbols(layout, scope, instances, runner, problem);
  };
  for (auto &found : binding_problems(pairs, changed_by, linked, runner)) {
    problems.push_back(std::move(found));
  }
  fs::remove_all(view);
  return problems;
}

} // namespace kopt::decide
