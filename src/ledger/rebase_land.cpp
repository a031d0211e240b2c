#include "ledger/detail.hpp"

#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/text.hpp"

namespace kopt::ledger {

using detail::commit_change;
using detail::Contents;
using detail::read_contents;
using detail::short_hash;

Recorded rebase(const Files &files, const std::function<std::string(const std::string &)> &hash_of,
                const std::string &reason, const std::string &date) {
  if (util::trim(reason).empty()) {
    throw Error("rebase: a reason is required: why BEST's content changed (e.g. \"heuristic "
                "refreshed from the sweeps of 16\")");
  }
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  if (!contents.state) {
    throw Error(files.state().string() + ": no ledger yet: nothing to rebase");
  }
  State s = *contents.state;
  if (s.stopped) {
    throw Error(files.state().string() + ": the ledger stopped on " + s.stop_date + " (" +
                s.stop_reason + "); nothing is rebased");
  }
  std::string hash = hash_of(s.best);
  if (hash == s.best_hash) {
    return {Outcome::identical,
            "BEST " + s.best + "'s content hash is already " + short_hash(hash) +
                ": nothing to rebase",
            s};
  }
  std::string from = s.best_hash;
  s.best_hash = hash;
  s.recorded.clear(); // they were compared with other code
  Attempt line;
  line.kind = Kind::rebase;
  line.date = date.empty() ? util::utc_now() : date;
  line.candidate = s.best;
  line.best = s.best;
  line.from_hash = from;
  line.hash = hash;
  line.reason = reason;
  commit_change(files, s, std::move(contents.attempts), to_json(line));
  return {Outcome::recorded,
          "rebased BEST " + s.best + ": content hash " + short_hash(from) + " -> " +
              short_hash(hash) + " (" + reason +
              "); the next keep test measures it beside the candidate",
          s};
}

nlohmann::json land_line(const Files &files, const Landing &landing, const std::string &date) {
  std::optional<State> state = read_state(files);
  if (!state) {
    throw Error(files.state().string() + ": no ledger yet: nothing was kept to land");
  }
  if (state->best != landing.candidate || state->best_hash != landing.hash) {
    throw Error("land: candidate " + landing.candidate + " (hash " + short_hash(landing.hash) +
                ") is not BEST: BEST is " + state->best + " (hash " + short_hash(state->best_hash) +
                "); only BEST lands");
  }
  Attempt line;
  line.kind = Kind::land;
  line.date = date.empty() ? util::utc_now() : date;
  line.candidate = landing.candidate;
  line.best = state->best;
  line.hash = landing.hash;
  line.removed = landing.removed;
  line.rebased = landing.rebased;
  line.reason = "the family's files are " + landing.candidate + "'s";
  if (!landing.removed.empty()) {
    line.reason += "; removed " + util::join(landing.removed, ", ");
  }
  if (!landing.rebased.empty()) {
    line.reason += "; rebased onto them: " + util::join(landing.rebased, ", ");
  }
  return to_json(line);
}

bool record_land(const Files &files, const nlohmann::json &line) {
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  if (!contents.state) {
    throw Error(files.state().string() + ": no ledger yet: nothing was kept to land");
  }
  for (const nlohmann::json &recorded : contents.attempts) {
    if (recorded == line) {
      return false;
    }
  }
  commit_change(files, *contents.state, std::move(contents.attempts), line);
  return true;
}

} // namespace kopt::ledger
