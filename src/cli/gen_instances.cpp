#include "candidate/candidate.hpp"
#include "cli/subcommands.hpp"
#include "gen/generate.hpp"
#include "spec/family.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

namespace kopt::cli {

namespace {

struct GenInstancesOptions {
  std::string spec;
  std::string out_root;
  std::vector<std::string> candidates;
  std::string cmake_out;
};

std::vector<std::string> path_strings(const std::vector<std::filesystem::path> &paths) {
  std::vector<std::string> out;
  for (const auto &p : paths) {
    out.push_back(p.string());
  }
  return out;
}

} // namespace

Handler setup_gen_instances(CLI::App &app) {
  auto options = std::make_shared<GenInstancesOptions>();
  app.add_option("--spec", options->spec, "the family's family.json")->required();
  app.add_option("--out-root", options->out_root,
                 "folder that receives one generated folder per candidate (<out-root>/<id>)")
      ->required();
  app.add_option("--candidate", options->candidates,
                 "generate only this candidate (repeatable; default: every candidate)");
  app.add_option("--cmake-out", options->cmake_out,
                 "also write the CMake fragment describing the generated candidates");
  return [options](Context &context) {
    spec::Family family = spec::load_family(options->spec);
    candidate::CandidateSet set = candidate::CandidateSet::discover(family);
    if (!set.target_problems().empty()) {
      throw Error(util::join(set.target_problems(), "\n"));
    }
    std::vector<std::string> ids = options->candidates;
    if (ids.empty()) {
      for (const auto &c : set.all()) {
        ids.push_back(c.id());
      }
    }
    std::vector<gen::Generated> generated;
    std::set<std::string> warnings; // the tuned table is shared: warn once per problem
    for (const auto &folder : set.skipped()) {
      warnings.insert(folder.string() + ": no candidate.json, so not a candidate (skipped)");
    }
    for (const auto &id : ids) {
      generated.push_back(
          gen::generate_candidate(family, set, set.get(id).id(), options->out_root));
      warnings.insert(generated.back().warnings.begin(), generated.back().warnings.end());
    }
    if (!options->cmake_out.empty()) {
      gen::write_cmake_fragment(family, generated, options->cmake_out);
    }
    for (const auto &w : warnings) {
      context.err << "kopt: warning: " << w << "\n";
    }
    if (context.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto &g : generated) {
        list.push_back({{"id", g.candidate},
                        {"hash", g.hash},
                        {"dir", g.dir.string()},
                        {"compiled", g.compiled},
                        {"sources", path_strings(g.sources)},
                        {"inputs", path_strings(g.inputs)},
                        {"written", path_strings(g.written)},
                        {"removed", path_strings(g.removed)}});
      }
      context.out << util::dump_json(nlohmann::json{
                         {"family", family.name},
                         {"candidates", list},
                         {"cmake_out", options->cmake_out},
                         {"warnings", std::vector<std::string>(warnings.begin(), warnings.end())}})
                  << "\n";
      return 0;
    }
    for (const auto &g : generated) {
      context.out << g.candidate << " " << g.hash << " " << g.compiled.size() << " instances, "
                  << g.written.size() << " files written\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
