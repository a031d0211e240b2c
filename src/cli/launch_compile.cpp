#include "buildinfo/compile_launcher.hpp"
#include "cli/subcommands.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace kopt::cli {

namespace {

struct LaunchOptions {
  std::string cwd;
  std::string base_dir;
  std::string remote_storage;
  std::vector<std::string> command;
};

} // namespace

Handler setup_launch_compile(CLI::App &app) {
  auto options = std::make_shared<LaunchOptions>();
  app.add_option("--cwd", options->cwd, "run the compile from this folder (the candidate's)")
      ->required();
  app.add_option("--base-dir", options->base_dir, "ccache's base_dir for this compile")->required();
  app.add_option("--remote-storage", options->remote_storage,
                 "ccache's remote_storage for this compile (e.g. redis://host:6379); entries "
                 "that do not answer are dropped with a warning");
  app.add_option("command", options->command, "the compile command, after --")->required();
  return [options](Context &) {
    util::RealProcessRunner runner;
    return buildinfo::launch_compile(options->command, options->cwd, options->base_dir, runner,
                                     options->remote_storage);
  };
}

} // namespace kopt::cli
