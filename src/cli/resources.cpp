#include "cli/subcommands.hpp"

#include "gpu/gate.hpp"
#include "gpu/resource_spec.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct ResourcesOptions {
  std::string out;
  bool all = false;
};

} // namespace

Handler setup_resources(CLI::App &app) {
  auto options = std::make_shared<ResourcesOptions>();
  app.add_option("--out", options->out, "the ctest resource spec file to write")->required();
  app.add_flag("--all", options->all, "list every GPU, idle or not");
  return [options](Context &context) {
    util::RealProcessRunner runner;
    gpu::RealClock clock;
    gpu::Gate gate(runner, clock);
    gpu::GateReport report = gate.check();
    if (!report.ok()) {
      throw Error("resources: " + report.error);
    }
    std::vector<int> gpus = report.idle;
    if (options->all) {
      gpus.clear();
      for (const auto &verdict : report.gpus) {
        gpus.push_back(verdict.status.index);
      }
    }
    gpu::write_resource_spec(options->out, gpus);
    if (context.json) {
      context.out << util::dump_json(nlohmann::json{{"file", options->out}, {"gpus", gpus}})
                  << "\n";
    } else {
      context.out << "wrote " << options->out << ": " << gpus.size() << " GPU(s) for ctest "
                  << "(ctest -j N --resource-spec-file " << options->out << ")\n";
    }
    return gpus.empty() ? 1 : 0;
  };
}

} // namespace kopt::cli
