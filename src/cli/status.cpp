#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

// BEST's row was measured over the configs file of its day: once the file changed, its geomean
// is of other configs than the next keep test measures. Returns what changed, or "".
std::string best_row_stale(const spec::Family &family, const ledger::State &state) {
  for (auto row = state.kept.rbegin(); row != state.kept.rend(); ++row) {
    if (row->candidate != state.best) {
      continue;
    }
    std::error_code ec;
    if (row->configs_hash.empty() || !std::filesystem::is_regular_file(family.configs, ec) ||
        util::hash_file(family.configs) == row->configs_hash) {
      return "";
    }
    std::string now = "?";
    try {
      now = std::to_string(util::read_csv(family.configs).rows.size());
    } catch (const Error &) {
      // The keep test names what is wrong with the file; the state is still shown.
    }
    return family.configs.filename().string() + " changed since BEST's row was measured (" +
           std::to_string(row->configs) + " configs then, " + now +
           " now): its geomean is of the configs of then";
  }
  return "";
}

} // namespace

Handler setup_status(CLI::App &app) {
  auto options = std::make_shared<FamilyOptions>();
  options->add_to(app);
  return [options](Context &context) {
    auto [family, layout] = read_family_state(*options, context.err);
    ledger::Files files{layout.ledger};
    std::optional<ledger::State> state = ledger::read_state(files);
    if (!state) {
      // Not a failure of kopt's, but no state to show: exit 1, so a script does not read on.
      std::string error =
          "no ledger yet (" + files.state().string() + "): record the baseline first";
      if (context.json) {
        context.out << util::dump_json(nlohmann::json{{"family", family.name},
                                                      {"ledger", files.dir.string()},
                                                      {"error", error}})
                    << "\n";
      } else {
        context.out << family.name << ": " << error << "\n";
      }
      return 1;
    }
    // BEST's folder gone by hand: the state names a candidate no command can build or land.
    std::filesystem::path best_dir = family.candidates_dir / state->best;
    std::error_code ec;
    std::string error;
    if (!state->best.empty() && !std::filesystem::exists(best_dir / "candidate.json", ec)) {
      error = "BEST " + state->best + "'s folder " + best_dir.string() +
              " is gone (no candidate.json there): restore it (e.g. git checkout -- " +
              best_dir.string() + ") before the next round or land";
    }
    std::string stale = best_row_stale(family, *state);
    if (context.json) {
      nlohmann::json j = ledger::to_json(*state);
      j["best_row_stale"] = stale;
      if (!error.empty()) {
        j["error"] = error;
      }
      context.out << util::dump_json(j) << "\n";
    } else {
      context.out << ledger::format_status(*state) << (stale.empty() ? "" : "note: " + stale + "\n")
                  << (error.empty() ? "" : "error: " + error + "\n");
    }
    return error.empty() ? 0 : 1;
  };
}

} // namespace kopt::cli
