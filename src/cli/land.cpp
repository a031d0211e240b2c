#include "candidate/land.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct LandOptions {
  FamilyOptions family;
  std::string id;
  bool commit = false;
  bool drop_unrecorded = false;
};

// The candidates attempts.jsonl names: settled work, whatever its verdict.
std::set<std::string> recorded_ids(const ledger::Files &files) {
  std::set<std::string> ids;
  for (const nlohmann::json &line : ledger::read_attempts(files.attempts())) {
    std::string kind = line.value("kind", "");
    if (kind == "baseline" || kind == "attempt") {
      ids.insert(line.value("candidate", ""));
    }
  }
  return ids;
}

std::string commit_message(const LoadedFamily &loaded, const candidate::LandPlan &plan) {
  std::string text = "kopt: land candidate " + plan.id + " of " + loaded.family.name +
                     "\n\nThe family's files are candidate " + plan.id + "'s (content hash " +
                     plan.hash.substr(0, 8) + ")";
  text += plan.written.empty() ? ".\n" : ": " + util::join(plan.written, ", ") + ".\n";
  if (!plan.removed.empty()) {
    text += "The folders of the settled candidates " + util::join(plan.removed, ", ") +
            " are removed; they are in this commit's parent (git show HEAD^:<family "
            "folder>/candidates/<id>/...), their verdicts in the ledger.\n";
  }
  if (!plan.rebased.empty()) {
    std::vector<std::string> ids;
    for (const auto &[id, files] : plan.rebased) {
      ids.push_back(id);
    }
    text += "Rebased onto them, content unchanged: " + util::join(ids, ", ") + ".\n";
  }
  return text;
}

} // namespace

Handler setup_land(CLI::App &app) {
  auto options = std::make_shared<LandOptions>();
  options->family.add_to(app);
  app.add_option("--id", options->id,
                 "the candidate to land (default: BEST; without a ledger, the one measured "
                 "elsewhere)");
  app.add_flag("--commit", options->commit,
               "commit the family folder's change in its git repository");
  app.add_flag("--drop-unrecorded", options->drop_unrecorded,
               "remove the candidates the ledger has not recorded too (else they are rebased)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    ledger::Files files{loaded.layout.ledger};
    std::optional<ledger::State> state = ledger::read_state(files);
    std::string id = options->id;
    std::set<std::string> settled;
    if (state) {
      if (!id.empty() && id != state->best) {
        throw Error("land: candidate " + id + " is not BEST (BEST is " + state->best +
                    "): only BEST lands");
      }
      id = state->best;
      loaded.best(); // BEST's content is what was kept, or this names the way out
      settled = recorded_ids(files);
    } else if (id.empty()) {
      throw Error("land: " + files.state().string() + ": no ledger yet, so no BEST: give --id " +
                  "ID to land a candidate whose measurements were made elsewhere");
    }
    candidate::LandPlan plan = candidate::plan_land(loaded.family, loaded.candidates, id, settled,
                                                    options->drop_unrecorded);
    if (plan.written.empty() && plan.removed.empty() && plan.rebased.empty()) {
      throw Error("land: nothing to land: the family's files are candidate " + id +
                  "'s already and no other candidate folder is there");
    }
    util::RealProcessRunner runner;
    std::string kept_commit;
    if (options->commit) {
      // Candidate folders that were never committed would leave no trace: they go in first.
      kept_commit = candidate::commit_family(
          loaded.family, loaded.family.candidates_dir,
          "kopt: the candidates of " + loaded.family.name + " before landing " + id, runner);
    }
    std::vector<std::filesystem::path> patches;
    auto write = [&] {
      if (state) {
        patches = candidate::write_removed_patches(loaded.family, loaded.candidates, plan,
                                                   files.dir / "landed", runner);
      }
      candidate::apply_land(loaded.family, loaded.candidates, plan);
    };
    std::string message;
    if (state) {
      ledger::Landing landing{id, plan.hash, plan.removed, {}};
      for (const auto &[other, kept] : plan.rebased) {
        landing.rebased.push_back(other);
      }
      message = ledger::land(files, landing, write).message;
    } else {
      write();
      message = "landed " + id + " (no ledger: nothing recorded)";
    }
    std::string commit;
    if (options->commit) {
      commit = candidate::commit_family(loaded.family, loaded.family.dir,
                                        commit_message(loaded, plan), runner);
    }
    std::vector<std::string> patch_names;
    for (const auto &p : patches) {
      patch_names.push_back(p.string());
    }
    nlohmann::ordered_json rebased = nlohmann::ordered_json::array();
    for (const auto &[other, kept] : plan.rebased) {
      rebased.push_back(other);
    }
    if (context.json) {
      context.out << nlohmann::ordered_json{{"candidate", id},
                                            {"hash", plan.hash},
                                            {"written", plan.written},
                                            {"removed", plan.removed},
                                            {"rebased", rebased},
                                            {"recorded", state.has_value()},
                                            {"patches", patch_names},
                                            {"commit", commit.empty()
                                                           ? nlohmann::ordered_json(nullptr)
                                                           : nlohmann::ordered_json(commit)}}
                         .dump(2)
                  << "\n";
    } else {
      context.out << message << "\n"
                  << "wrote " << (plan.written.empty() ? "nothing" : util::join(plan.written, ", "))
                  << " in " << loaded.family.dir.string() << "\n";
      if (!patches.empty()) {
        context.out << "the removed candidates' changes: " << (files.dir / "landed").string()
                    << "/<id>.patch\n";
      }
      context.out << (commit.empty() ? "review it with git diff and commit it (or run kopt land "
                                       "--commit next time)\n"
                                     : "committed " + commit.substr(0, 12) +
                                           (kept_commit.empty()
                                                ? std::string()
                                                : " (after " + kept_commit.substr(0, 12) +
                                                      ": the candidate folders as they were)") +
                                           "\n");
    }
    return 0;
  };
}

} // namespace kopt::cli
