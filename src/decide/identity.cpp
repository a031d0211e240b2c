#include "decide/identity.hpp"

#include "buildinfo/expansion.hpp"
#include "buildinfo/resource_usage.hpp"
#include "buildinfo/symbols.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <iterator>
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

// `libc.so.6`, `libkopt_harness.a(inputs.cpp.o)`, `harness.cpp.o`.
std::string definer(const bi::DefinedSymbol &symbol) {
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

} // namespace

std::vector<std::string> symbol_problems(const spec::Family &family,
                                         const candidate::CandidateSet &candidates,
                                         const spec::Layout &layout, const IdentityScope &scope,
                                         const bi::NinjaDeps &deps, util::ProcessRunner &runner) {
  fs::path build_dir = fs::absolute(scope.build_dir);
  std::vector<std::string> instances =
      absolute_all(target_objects(deps, scope.target).instances, build_dir);
  if (instances.empty()) {
    return {}; // check_identity already says that nothing was built
  }
  std::set<std::string> instance_set(instances.begin(), instances.end());
  OtherInputs others = other_inputs(layout, scope, instance_set, runner);
  if (!others.problem.empty()) {
    return {"cannot list what " + scope.target + " links: " + others.problem};
  }
  std::string problem;
  std::vector<bi::DefinedSymbol> own = run_nm(instances, false, runner, problem);
  std::vector<bi::DefinedSymbol> theirs = run_nm(others.statics, false, runner, problem);
  std::vector<bi::DefinedSymbol> shared = run_nm(others.shared, true, runner, problem);
  std::vector<bi::ReferencedSymbol> used = run_nm_undefined(instances, runner, problem);
  if (!problem.empty()) {
    return {"cannot read the symbols " + scope.target + " links: " + problem};
  }
  theirs.insert(theirs.end(), shared.begin(), shared.end());
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
                       definer(refused.other) + ": a candidate may define only its instances");
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
    return {}; // the same headers expand the same
  }
  std::vector<std::string> objects;
  for (const auto &object : target_objects(deps, scope.target).others) {
    for (const auto &input : deps.at(object)) {
      if (fs::path(input).lexically_normal().string().starts_with((own / "src/").string())) {
        objects.push_back(object);
        break;
      }
    }
  }
  fs::path view = layout.root / "tmp" / ("baseline-headers-" + scope.id);
  make_baseline_view(own, base, view);
  fs::path build_dir = fs::absolute(scope.build_dir);
  std::vector<std::string> problems;
  // Every object's two expansions at once: on a machine of many cores the check then takes
  // about as long as its slowest preprocessing, not their sum.
  std::vector<std::string> preprocessed_objects;
  std::vector<bi::PreprocessCommand> commands; // each object's own, then the baseline's
  for (const auto &object : objects) {
    util::ProcessResult line =
        runner.run({{"ninja", "-C", scope.build_dir, "-t", "commands", "-s", object}, {}, {}, 120});
    if (!line.ok()) {
      problems.push_back("`ninja -t commands -s " + object + "` " + line.describe(120));
      continue;
    }
    bi::PreprocessCommand mine = bi::preprocess_command(line.out, build_dir);
    bi::PreprocessCommand theirs = mine;
    for (auto &arg : theirs.argv) {
      arg = swap_folder(arg, own.string(), view.string());
    }
    theirs.cwd = swap_folder(theirs.cwd.string(), own.string(), view.string());
    preprocessed_objects.push_back(object);
    commands.insert(commands.end(), {mine, theirs});
  }
  std::vector<util::Command> runs;
  std::transform(commands.begin(), commands.end(), std::back_inserter(runs), preprocess_run);
  std::vector<util::ProcessResult> results = runner.run_all(runs, 0);
  for (size_t i = 0; i < preprocessed_objects.size(); ++i) {
    const std::string &object = preprocessed_objects[i];
    Preprocessed with_own = preprocessed(commands[2 * i], results[2 * i], own);
    Preprocessed with_base = preprocessed(commands[2 * i + 1], results[2 * i + 1], view);
    for (const auto &failed : {with_own.problem, with_base.problem}) {
      if (!failed.empty()) {
        problems.push_back("cannot preprocess " + object + ": " + failed);
      }
    }
    if (!with_own.problem.empty() || !with_base.problem.empty()) {
      continue;
    }
    if (auto at = bi::first_difference(with_base.expansion, with_own.expansion)) {
      problems.push_back(fs::path(at->first).filename().string() + ":" +
                         std::to_string(at->second) + " expands differently with candidate " +
                         scope.id + "'s " + util::join(changed, " and ") +
                         " than with the baseline's: a macro of the candidate changes harness "
                         "code");
    }
  }
  fs::remove_all(view);
  return problems;
}

} // namespace kopt::decide
