#include "buildinfo/resource_usage.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace fs = std::filesystem;

namespace {

struct ResourceUsageOptions {
  FamilyOptions family;
  std::vector<std::string> candidates;
};

// Reads a candidate harness binary's kernels with `cuobjdump --dump-resource-usage`.
std::vector<buildinfo::KernelResources> read_binary(const fs::path &binary) {
  if (!fs::exists(binary)) {
    throw Error("no harness binary at " + binary.string() + " (build its candidate first)");
  }
  util::RealProcessRunner runner;
  util::Command command;
  command.argv = {"cuobjdump", "--dump-resource-usage", binary.string()};
  command.timeout_s = 120;
  util::ProcessResult result = runner.run(command);
  if (!result.ok()) {
    throw Error("cuobjdump --dump-resource-usage " + binary.string() + ": " +
                result.describe(command.timeout_s) + "\n" + result.err);
  }
  return buildinfo::parse_cuobjdump_resource_usage(result.out, binary.string());
}

std::string cell(long v) { return v < 0 ? "?" : std::to_string(v); }

// What changed from BEST's kernel of the same name, e.g. "REG 168->255".
std::string changes(const buildinfo::KernelResources &k, const buildinfo::KernelResources *best) {
  if (best == nullptr) {
    return "new";
  }
  std::string out;
  auto diff = [&](const char *name, long now, long before) {
    if (now != before) {
      out += (out.empty() ? "" : ", ") + std::string(name) + " " + cell(before) + "->" + cell(now);
    }
  };
  diff("REG", k.registers, best->registers);
  diff("STACK", k.stack_bytes, best->stack_bytes);
  diff("SHARED", k.shared_bytes, best->shared_bytes);
  diff("LOCAL", k.local_bytes, best->local_bytes);
  return out;
}

nlohmann::json to_json(const buildinfo::KernelResources &k) {
  return {{"kernel", k.kernel},
          {"name", buildinfo::demangle(k.kernel)},
          {"arch", k.arch},
          {"registers", k.registers},
          {"stack_bytes", k.stack_bytes},
          {"shared_bytes", k.shared_bytes},
          {"local_bytes", k.local_bytes},
          {"max_warps_by_registers", k.max_warps_by_registers()}};
}

} // namespace

Handler setup_resource_usage(CLI::App &app) {
  auto options = std::make_shared<ResourceUsageOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidates,
                 "candidates to show (default: every candidate with a built harness)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    if (loaded.family.backend != spec::Backend::cuda) {
      throw Error(loaded.family.file.string() +
                  ": backend: kopt resource-usage reads cuda "
                  "binaries (cuobjdump); '" +
                  spec::to_string(loaded.family.backend) + "' is not supported yet");
    }
    std::string best = loaded.best(ledger::ContentCheck::skip).id;
    std::vector<std::string> ids = options->candidates;
    if (ids.empty()) {
      for (const auto &c : loaded.candidates.all()) {
        if (fs::exists(loaded.layout.harness(c.id()))) {
          ids.push_back(c.id());
        }
      }
    }
    std::map<std::string, buildinfo::KernelResources> best_kernels;
    if (fs::exists(loaded.layout.harness(best))) {
      for (auto &k : read_binary(loaded.layout.harness(best))) {
        best_kernels[k.arch + "/" + k.kernel] = k;
      }
    }
    nlohmann::json j = {{"best", best}, {"candidates", nlohmann::json::object()}};
    for (const auto &id : ids) {
      std::vector<buildinfo::KernelResources> kernels = read_binary(loaded.layout.harness(id));
      nlohmann::json rows = nlohmann::json::array();
      std::string table;
      char line[512];
      std::snprintf(line, sizeof line, "  %-8s %5s %6s %7s %6s %9s  %s\n", "arch", "REG", "STACK",
                    "SHARED", "LOCAL", "warps/SM", "kernel  [change vs BEST]");
      table += line;
      for (const auto &k : kernels) {
        auto it = best_kernels.find(k.arch + "/" + k.kernel);
        const buildinfo::KernelResources *b = it == best_kernels.end() ? nullptr : &it->second;
        std::string change = id == best ? "" : changes(k, b);
        std::string flag = (k.stack_bytes > 0 || k.local_bytes > 0) ? " (stack: spills?)" : "";
        std::snprintf(line, sizeof line, "  %-8s %5d %6s %7s %6s %9d  %s%s%s\n", k.arch.c_str(),
                      k.registers, cell(k.stack_bytes).c_str(), cell(k.shared_bytes).c_str(),
                      cell(k.local_bytes).c_str(), k.max_warps_by_registers(),
                      buildinfo::demangle(k.kernel).c_str(), flag.c_str(),
                      change.empty() ? "" : ("  [" + change + "]").c_str());
        table += line;
        nlohmann::json row = to_json(k);
        row["changed_vs_best"] = change;
        rows.push_back(row);
      }
      j["candidates"][id] = rows;
      context.out << (context.json
                          ? ""
                          : "candidate " + id + (id == best ? " (BEST)" : "") + ":\n" + table);
    }
    if (context.json) {
      context.out << util::dump_json(j) << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
