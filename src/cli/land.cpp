#include "candidate/land.hpp"
#include "candidate/land_journal.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/process.hpp"
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
  bool overwrite = false;
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
    text += "Rebased onto them, content unchanged: " + util::join(plan.rebased_ids(), ", ") + ".\n";
  }
  return text;
}

// What `kopt land` did.
struct Landed {
  candidate::LandPlan plan;
  bool recorded = false; ///< a land line went into the ledger
  std::string message;
  std::vector<std::filesystem::path> patches;
  std::string kept_commit; ///< the candidate folders as they were (--commit)
  std::string commit;      ///< the landing (--commit)
};

// The candidate to land and the settled ones: BEST and the ledger's, or --id without a ledger.
std::string landed_id(LoadedFamily &loaded, const LandOptions &options, const ledger::Files &files,
                      const std::optional<ledger::State> &state, std::set<std::string> &settled) {
  if (!state) {
    if (options.id.empty()) {
      throw Error("land: " + files.state().string() + ": no ledger yet, so no BEST: give --id " +
                  "ID to land a candidate whose measurements were made elsewhere");
    }
    return options.id;
  }
  if (!options.id.empty() && options.id != state->best) {
    throw Error("land: candidate " + options.id + " is not BEST (BEST is " + state->best +
                "): only BEST lands");
  }
  loaded.best(); // BEST's content is what was kept, or this names the way out
  settled = recorded_ids(files);
  return state->best;
}

Landed land(LoadedFamily &loaded, const LandOptions &options) {
  ledger::Files files{loaded.layout.ledger};
  std::optional<ledger::State> state = ledger::read_state(files);
  std::set<std::string> settled;
  std::string id = landed_id(loaded, options, files, state, settled);
  Landed out;
  out.plan =
      candidate::plan_land(loaded.family, loaded.candidates, id, settled, options.drop_unrecorded);
  const candidate::LandPlan &plan = out.plan;
  if (plan.written.empty() && plan.removed.empty() && plan.rebased.empty()) {
    throw Error("land: nothing to land: the family's files are candidate " + id +
                "'s already, and every other candidate is based on it");
  }
  util::RealProcessRunner runner;
  std::vector<std::string> dirty = candidate::uncommitted(loaded.family, plan.written, runner);
  if (!dirty.empty() && !options.overwrite) {
    throw Error("land: the family's files that landing writes hold uncommitted changes: " +
                util::join(dirty, ", ") + ": commit or stash them, or give --overwrite to " +
                "replace them with candidate " + id + "'s; nothing written");
  }
  candidate::LandJournal journal = candidate::journal_of(loaded.candidates, plan);
  if (state) {
    journal.patch_dir = files.landed();
    journal.patches = candidate::removed_patches(loaded.family, loaded.candidates, plan, runner);
    journal.ledger_line =
        ledger::land_line(files, ledger::Landing{id, plan.hash, plan.removed, plan.rebased_ids()});
    out.message = "landed " + id + ": " + journal.ledger_line.value("reason", "");
    out.recorded = true;
  } else {
    out.message = "landed " + id + " (no ledger: nothing recorded)";
  }
  for (const auto &[gone, patch] : journal.patches) {
    out.patches.push_back(journal.patch_dir / (gone + ".patch"));
  }
  if (options.commit) {
    // Candidate folders that were never committed would leave no trace: they go in first.
    out.kept_commit = candidate::commit_paths(
        loaded.family, candidate::landed_paths(loaded.family, plan, true),
        "kopt: the candidates of " + loaded.family.name + " before landing " + id, runner);
    journal.commit_message = commit_message(loaded, plan);
  }
  auto record_line = [&](const nlohmann::json &line) { ledger::record_land(files, line); };
  out.commit = candidate::run_land(loaded.family, loaded.layout, journal, record_line, runner);
  return out;
}

void print_landed(const Landed &landed, const LoadedFamily &loaded, Context &context) {
  const candidate::LandPlan &plan = landed.plan;
  if (context.json) {
    std::vector<std::string> patches;
    for (const auto &p : landed.patches) {
      patches.push_back(p.string());
    }
    auto or_null = [](const std::string &text) {
      return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
    };
    context.out << nlohmann::ordered_json{{"candidate", plan.id},
                                          {"hash", plan.hash},
                                          {"written", plan.written},
                                          {"removed", plan.removed},
                                          {"rebased", plan.rebased_ids()},
                                          {"recorded", landed.recorded},
                                          {"patches", patches},
                                          {"commit", or_null(landed.commit)}}
                       .dump(2)
                << "\n";
    return;
  }
  context.out << landed.message << "\nwrote "
              << (plan.written.empty() ? "nothing" : util::join(plan.written, ", ")) << " in "
              << loaded.family.dir.string() << "\n";
  if (!landed.patches.empty()) {
    context.out << "the removed candidates' changes: "
                << landed.patches.front().parent_path().string() << "/<id>.patch\n";
  }
  if (landed.commit.empty()) {
    context.out << "review it with git diff and commit it (or run kopt land --commit)\n";
  } else {
    context.out << "committed " << landed.commit.substr(0, 12)
                << (landed.kept_commit.empty() ? std::string()
                                               : " (after " + landed.kept_commit.substr(0, 12) +
                                                     ": the candidate folders as they were)")
                << "\n";
  }
}

// The family's build folder, configured again when landing removed candidate folders: its
// ctest files still hold their tests, which would fail at the next ctest. Says what it did (on
// stderr under --json); a configure that fails is named with the command to run, and the land
// stands.
void reconfigure_after_land(const Landed &landed, const std::string &build_dir, Context &context) {
  if (landed.plan.removed.empty() || build_dir.empty()) {
    return;
  }
  std::ostream &out = context.json ? context.err : context.out;
  util::RealProcessRunner runner;
  util::Command command;
  command.argv = {"cmake", build_dir};
  util::ProcessResult result = runner.run(command);
  if (result.ok()) {
    out << "configured " << build_dir << " again: its tests of "
        << util::join(landed.plan.removed, ", ") << " are gone\n";
  } else {
    out << "kopt land: `cmake " << build_dir << "` " << result.describe(0)
        << ": configure it again before the next ctest (its tests of removed candidates fail)\n";
  }
}

} // namespace

Handler setup_land(CLI::App &app) {
  auto options = std::make_shared<LandOptions>();
  options->family.add_to(app);
  auto *id = app.add_option("--id", options->id,
                            "the candidate to land (default: BEST; without a ledger, the one "
                            "measured elsewhere)");
  app.add_flag("--commit", options->commit,
               "commit what landing wrote (and nothing the user staged) in the family's git "
               "repository");
  app.add_flag("--overwrite", options->overwrite,
               "replace uncommitted changes to the family's files that landing writes");
  app.add_flag("--drop-unrecorded", options->drop_unrecorded,
               "remove the candidates the ledger has not recorded too (else they are rebased)");
  return [options, id](Context &context) {
    // Alone: no round builds or measures the family's files while they are rewritten.
    options->family.resolve();
    util::FileLock family(
        spec::Layout(options->family.state_dir, options->family.ledger).lock("family"),
        &context.err, util::FileLock::Mode::exclusive, "kopt land");
    // What a killed or failed landing left is completed (or rolled back) before anything reads.
    measure::complete_land(spec::load_family(options->family.spec),
                           spec::Layout(options->family.state_dir, options->family.ledger),
                           context.err, candidate::FamilyLock::held);
    LoadedFamily loaded = load_family(options->family);
    if (id->count() > 0) {
      loaded.candidates.get(options->id); // `--id ''` names no candidate: refused as others are
    }
    Landed landed = land(loaded, *options);
    print_landed(landed, loaded, context);
    reconfigure_after_land(landed, options->family.registered_build_dir(), context);
    return 0;
  };
}

} // namespace kopt::cli
