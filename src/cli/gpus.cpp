#include "cli/subcommands.hpp"

#include "cli/number_options.hpp"
#include "gpu/gate.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

std::string number(double value, const char *unit) {
  return value < 0 ? "?" : util::format_number(value, 10) + unit;
}

nlohmann::json to_json(const gpu::GateReport &report) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto &verdict : report.gpus) {
    const auto &s = verdict.status;
    gpus.push_back({{"index", s.index},
                    {"uuid", s.uuid},
                    {"name", s.name},
                    {"utilization_pct", s.utilization_pct},
                    {"memory_used_mib", s.memory_used_mib},
                    {"memory_total_mib", s.memory_total_mib},
                    {"memory_used_pct", s.memory_used_pct},
                    {"idle", verdict.idle},
                    {"reason", verdict.reason}});
  }
  nlohmann::json j = {{"tool", gpu::to_string(report.tool)},
                      {"error", report.error},
                      {"gpus", gpus},
                      {"idle", report.idle}};
  j["binding"] = report.idle.empty()
                     ? nlohmann::json::object()
                     : nlohmann::json(gpu::binding_env(report.tool, report.idle.front()));
  return j;
}

} // namespace

Handler setup_gpus(CLI::App &app) {
  auto options = std::make_shared<gpu::GateOptions>();
  app.add_option("--sample-gap", options->sample_gap_s,
                 "seconds between the two samples whose memory must not grow")
      ->check(finite_number(0))
      ->capture_default_str();
  app.add_option("--max-utilization", options->max_utilization_pct,
                 "the highest utilisation (%) that still counts as idle")
      ->check(finite_number(0, 100))
      ->capture_default_str();
  return [options](Context &context) {
    util::RealProcessRunner runner;
    gpu::RealClock clock;
    gpu::Gate gate(runner, clock, *options);
    gpu::GateReport report = gate.check();
    if (context.json) {
      context.out << util::dump_json(to_json(report)) << "\n";
      return report.ok() ? 0 : 1;
    }
    if (!report.ok()) {
      context.err << "kopt: " << report.error << "\n";
      return 1;
    }
    context.out << "tool: " << gpu::to_string(report.tool) << "\n";
    for (const auto &verdict : report.gpus) {
      const auto &s = verdict.status;
      std::string memory = s.memory_used_mib >= 0 ? number(s.memory_used_mib, "") + "/" +
                                                        number(s.memory_total_mib, " MiB")
                                                  : number(s.memory_used_pct, "%");
      context.out << "GPU " << s.index << "  " << (s.name.empty() ? "?" : s.name) << "  util "
                  << number(s.utilization_pct, "%") << "  memory " << memory << "  "
                  << (verdict.idle ? "idle" : "busy: " + verdict.reason) << "\n";
    }
    std::vector<std::string> idle;
    for (int index : report.idle) {
      idle.push_back(std::to_string(index));
    }
    context.out << "idle, most idle first: " << (idle.empty() ? "none" : util::join(idle, " "))
                << "\n";
    return 0;
  };
}

} // namespace kopt::cli
