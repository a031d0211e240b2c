#include "fileapi/import.hpp"
#include "cli/subcommands.hpp"
#include "fileapi/compdb.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct ImportOptions {
  std::string build_dir;
  std::string compdb;
  fileapi::ImportRequest request;
  std::string source;
  std::string out;
};

// The imported target as `kopt import --json` prints it.
nlohmann::json import_json(const ImportOptions &options, const fileapi::CodeModel &model,
                           const fileapi::Imported &imported) {
  nlohmann::json includes = nlohmann::json::array();
  for (const auto &inc : imported.includes) {
    includes.push_back({{"path", inc.path}, {"system", inc.system}});
  }
  return nlohmann::json{{"out", options.out},
                        {"build_dir", imported.build_dir},
                        {"generator", model.generator},
                        {"codemodel_minor", model.codemodel_minor},
                        {"target", imported.target},
                        {"type", imported.type},
                        {"config", imported.config},
                        {"language", imported.language},
                        {"compiler", imported.compiler},
                        {"host_compiler", imported.host_compiler},
                        {"standard", imported.standard},
                        {"source", imported.source},
                        {"fragments", imported.fragments},
                        {"flags", imported.flags},
                        {"defines", imported.defines},
                        {"includes", includes},
                        {"artifact", imported.artifact},
                        {"baseline", imported.baseline},
                        {"baseline_reason", imported.baseline_reason},
                        {"config_reason", imported.config_reason},
                        {"separable", imported.separable},
                        {"rule_args", imported.rule_args},
                        {"rule_file", imported.rule_file}};
}

int run_import(ImportOptions options, Context &context) {
  if (options.build_dir.empty() && options.compdb.empty()) {
    throw Error("kopt import: give --build-dir <CMake build tree> or --compdb "
                "<compile_commands.json or ninja build folder>");
  }
  if (options.request.target.empty() && options.source.empty()) {
    throw Error("kopt import: give --target <name> or --source <kernel file>");
  }
  options.request.source = options.source;
  util::RealProcessRunner runner;
  fileapi::CodeModel model;
  fileapi::Imported imported;
  if (!options.compdb.empty()) {
    imported = fileapi::select_from_database(fileapi::read_compile_database(options.compdb, runner),
                                             options.compdb, options.request);
    model.generator = "compile database";
  } else {
    model = fileapi::load(options.build_dir, runner, context.err);
    imported = fileapi::select(model, options.request);
  }
  util::write_file_if_changed(options.out, fileapi::render_cmake(imported));
  if (model.multi_config) {
    context.err << "kopt import: " << model.build_dir.string() << " is a multi-config tree ("
                << model.generator << "): configuration " << imported.config << " ("
                << imported.config_reason << ")\n";
  }
  context.err << "kopt import: baseline mode " << imported.baseline << ": "
              << imported.baseline_reason << "\n";
  for (const auto &note : imported.notes) {
    context.err << "kopt import: " << note << "\n";
  }
  if (context.json) {
    context.out << util::dump_json(import_json(options, model, imported)) << "\n";
    return 0;
  }
  context.out << options.out << ": " << imported.target << " (" << imported.type << ", "
              << imported.language << (imported.config.empty() ? "" : ", " + imported.config)
              << "): " << imported.flags.size() << " flags, " << imported.defines.size()
              << " defines, " << imported.includes.size() << " include folders"
              << (imported.separable ? ", separable compilation" : "") << "; artifact "
              << (imported.artifact.empty() ? "none" : imported.artifact) << "; baseline "
              << imported.baseline << "\n";
  return 0;
}

} // namespace

Handler setup_import(CLI::App &app) {
  auto options = std::make_shared<ImportOptions>();
  auto *build_dir = app.add_option("--build-dir", options->build_dir,
                                   "the configured CMake build tree to import");
  auto *compdb = app.add_option("--compdb", options->compdb,
                                "a compile_commands.json, or a ninja build folder (its "
                                "`ninja -t compdb`): a build that is not CMake's, by --source");
  build_dir->excludes(compdb);
  app.add_option("--target", options->request.target,
                 "the tree's target that compiles the kernels");
  app.add_option("--source", options->source,
                 "a kernel source: import the target (and compile group) that compiles it");
  app.add_option("--config", options->request.config,
                 "the configuration (default: the tree's build type, or its default one)");
  app.add_option("--language", options->request.language,
                 "the kernel language (default: the source's, else CUDA, HIP, CXX, C)");
  app.add_option("--baseline", options->request.baseline,
                 "baseline 00: library (link the target's library) or compile (compile its "
                 "instances with the tree's flags); default: library when the target is one")
      ->check(CLI::IsMember({"library", "compile"}));
  app.add_option("--out", options->out, "the CMake file to write (for kopt_add_family IMPORTED)")
      ->required();
  return [options](Context &context) { return run_import(*options, context); };
}

} // namespace kopt::cli
