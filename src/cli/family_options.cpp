#include "cli/family_options.hpp"

#include "cli/number_options.hpp"
#include "gpu/binding.hpp"
#include "ledger/ledger.hpp"
#include "measure/build.hpp"
#include "measure/device.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <ostream>

namespace kopt::cli {

void FamilyOptions::add_to(CLI::App &app, std::string *subcommand_build_dir) {
  build_dir = subcommand_build_dir;
  app.add_option("--spec", spec,
                 "the family's family.json (default: the family configured in this build folder)");
  app.add_option("--state-dir", state_dir,
                 "the family's state folder in the build tree (<build>/kopt/<family>; default: "
                 "as configured in this build folder)");
  app.add_option(
      "--family", family,
      "which family of the build folder, when it holds several (kopt_add_family's name)");
  app.add_option("--ledger", ledger, "the ledger folder (default: <state-dir>/ledger)");
  app.add_option("--gpu-wait-min", gpu_wait_min,
                 "GPU families: minutes to wait for an idle GPU (re-checked every 10 min)")
      ->check(finite_number(0))
      ->capture_default_str();
}

namespace {

namespace fs = std::filesystem;

// The families kopt_add_family registered in build folder `dir`, by name.
std::map<std::string, nlohmann::json> registered_families(const fs::path &dir) {
  std::map<std::string, nlohmann::json> families;
  std::error_code ec;
  if (!fs::is_directory(dir / "kopt", ec)) {
    return families;
  }
  for (const auto &entry : fs::directory_iterator(dir / "kopt", ec)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".family.json";
    if (file.size() > suffix.size() && file.ends_with(suffix)) {
      nlohmann::json j = util::read_json(entry.path());
      families[util::json_field<std::string>(j, "name", entry.path().string())] = j;
    }
  }
  return families;
}

// The nearest of `start` and the folders above it for which `found` holds; "" when none does.
fs::path nearest_folder(const fs::path &start, const std::function<bool(const fs::path &)> &found) {
  for (fs::path dir = fs::absolute(start).lexically_normal(); !dir.empty();
       dir = dir.parent_path()) {
    if (found(dir)) {
      return dir;
    }
    if (dir == dir.root_path()) {
      break;
    }
  }
  return {};
}

// The build folder to look in: `start` or the nearest folder above it with a CMakeCache.txt
// and registered families; "" when there is none.
fs::path find_build_folder(const fs::path &start) {
  return nearest_folder(start, [](const fs::path &dir) {
    std::error_code ec;
    return fs::exists(dir / "CMakeCache.txt", ec) && !registered_families(dir).empty();
  });
}

} // namespace

void FamilyOptions::resolve() {
  if (!spec.empty() && !state_dir.empty()) {
    return;
  }
  if (!spec.empty() || !state_dir.empty()) {
    throw Error(std::string(spec.empty() ? "--state-dir" : "--spec") + " was given without " +
                (spec.empty() ? "--spec" : "--state-dir") +
                ": give both, or neither from a build folder where kopt_add_family configured "
                "the family");
  }
  const bool given = build_dir && !build_dir->empty();
  const fs::path start = given ? fs::path(*build_dir) : fs::current_path();
  const fs::path root = find_build_folder(start);
  if (root.empty()) {
    throw Error("no family given (--spec and --state-dir) and none configured in " +
                fs::absolute(start).lexically_normal().string() +
                (given ? "" : " or a folder above it") +
                ": run kopt from a build folder where kopt_add_family configured a family (it "
                "writes <build>/kopt/<name>.family.json), or give --spec and --state-dir");
  }
  std::map<std::string, nlohmann::json> families = registered_families(root);
  std::vector<std::string> names;
  for (const auto &[name, j] : families) {
    names.push_back(name);
  }
  if (family.empty() && families.size() > 1) {
    throw Error("the build folder " + root.string() + " holds the families " +
                util::join(names, ", ") + ": name one with --family");
  }
  auto at = family.empty() ? families.begin() : families.find(family);
  if (at == families.end()) {
    throw Error("--family " + family + ": no such family in the build folder " + root.string() +
                " (it holds " + util::join(names, ", ") + ")");
  }
  const std::string where = (root / "kopt" / (at->first + ".family.json")).string();
  spec = util::json_field<std::string>(at->second, "spec", where);
  state_dir = util::json_field<std::string>(at->second, "state_dir", where);
  if (ledger.empty()) {
    ledger = util::json_field_or<std::string>(at->second, "ledger", "", where);
  }
  if (build_dir && build_dir->empty()) {
    *build_dir = util::json_field_or<std::string>(at->second, "build_dir", root.string(), where);
  }
}

std::string FamilyOptions::registered_build_dir() const {
  if (state_dir.empty()) {
    return "";
  }
  std::error_code ec;
  const fs::path state = fs::weakly_canonical(state_dir, ec);
  std::string build;
  nearest_folder(state.parent_path(), [&](const fs::path &dir) {
    for (const auto &[name, j] : registered_families(dir)) {
      const std::string where = (dir / "kopt" / (name + ".family.json")).string();
      std::string registered = util::json_field_or<std::string>(j, "state_dir", "", where);
      if (!registered.empty() && fs::weakly_canonical(registered, ec) == state &&
          fs::exists(dir / "CMakeCache.txt", ec)) {
        build = util::json_field_or<std::string>(j, "build_dir", dir.string(), where);
        return true;
      }
    }
    return false;
  });
  return build;
}

void FamilyOptions::require_state_dir() {
  resolve();
  std::error_code ec;
  if (!fs::is_directory(state_dir, ec)) {
    throw Error("--state-dir " + state_dir +
                ": no such folder (the family's state folder, <build>/kopt/<family>, is made "
                "when its build is configured)");
  }
  // An empty folder is a state with nothing in it yet; a folder of other things (the source
  // or the build folder, say) is the wrong one, and must not read as an empty ledger.
  bool known = fs::is_empty(state_dir, ec);
  for (const char *part : {"targets.cmake", "gen", "ledger", "results"}) {
    known = known || fs::exists(fs::path(state_dir) / part, ec);
  }
  if (!known) {
    throw Error("--state-dir " + state_dir +
                ": not a family's state folder (it holds no targets.cmake, gen/, ledger/ or "
                "results/; the state folder is <build>/kopt/<family>, made when its build is "
                "configured)");
  }
}

LoadedFamily load_family(FamilyOptions &options) {
  options.resolve();
  // A landing that a kill or a full disk stopped half way is completed before anything reads.
  measure::complete_land(spec::load_family(options.spec),
                         spec::Layout(options.state_dir, options.ledger), std::cerr);
  return measure::load(options.spec, options.state_dir, options.ledger);
}

FamilyState read_family_state(FamilyOptions &options, std::ostream &err) {
  options.require_state_dir();
  FamilyState state{spec::load_family(options.spec),
                    spec::Layout(options.state_dir, options.ledger)};
  measure::complete_land(state.family, state.layout, err);
  return state;
}

void print_recorded(const Context &context, const std::string &outcome,
                    const ledger::Recorded &recorded) {
  if (context.json) {
    context.out << util::dump_json(nlohmann::json{{"outcome", outcome},
                                                  {"message", recorded.message},
                                                  {"state", ledger::to_json(recorded.state)}})
                << "\n";
  } else {
    context.out << recorded.message << "\n" << ledger::summary_line(recorded.state) << "\n";
  }
}

std::optional<profile::RunSetup> gpu_setup(const LoadedFamily &loaded, double gpu_wait_min,
                                           std::ostream &err) {
  gpu::Binding binding = measure::bind_device(loaded, gpu_wait_min);
  if (loaded.family.backend != spec::Backend::host) {
    err << "kopt: GPU gate: " << binding.message << "\n";
  }
  if (!binding.ok) {
    return std::nullopt;
  }
  util::RealProcessRunner runner;
  return measure::run_setup(loaded.family, binding, runner);
}

int build_targets(const std::string &build_dir, const std::vector<std::string> &targets,
                  std::ostream &err) {
  util::ProcessResult result = measure::build_targets(build_dir, targets, &err);
  if (!result.ok()) {
    err << result.out << result.err;
    err << "kopt: building " << util::join(targets, ", ") << " " << result.describe(0) << "\n";
  }
  return result.ok() ? 0 : 1;
}

std::optional<profile::RunSetup> prepare_run(const LoadedFamily &loaded,
                                             const std::string &build_dir,
                                             const std::vector<std::string> &targets,
                                             double gpu_wait_min, std::ostream &err) {
  if (!build_dir.empty() && build_targets(build_dir, targets, err) != 0) {
    return std::nullopt;
  }
  return gpu_setup(loaded, gpu_wait_min, err);
}

} // namespace kopt::cli
