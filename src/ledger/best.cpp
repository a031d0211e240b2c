#include "ledger/ledger.hpp"

#include "util/error.hpp"

namespace kopt::ledger {

std::string baseline(const spec::Family &family, const candidate::CandidateSet &candidates) {
  for (const auto &c : candidates.all()) {
    if (c.spec.base.empty()) {
      return c.id();
    }
  }
  throw Error(family.file.string() + ": no baseline candidate (one without 'base')");
}

Best resolve_best(const Files &files, const spec::Family &family,
                  const candidate::CandidateSet &candidates, ContentCheck check) {
  std::optional<State> state = read_state(files);
  if (!state) {
    std::string id = baseline(family, candidates);
    if (check == ContentCheck::skip) {
      return {id, "", false};
    }
    return {id, candidates.content_hash(family, id), false};
  }
  if (check == ContentCheck::skip) {
    return {state->best, state->best_hash};
  }
  std::string now = candidates.content_hash(family, state->best);
  if (now != state->best_hash) {
    std::string dir = candidates.get(state->best).dir.string();
    throw Error("BEST " + state->best + "'s content changed since it was kept (content hash now " +
                now + ", kept as " + state->best_hash + "; its folder is " + dir +
                "): restore it (e.g. git checkout -- " + dir +
                "), or copy the changed folder to a new candidate id and restore BEST's; a "
                "changed family.json, tuned table or heuristic changes every candidate's hash: "
                "keep such a change with kopt rebase --reason <why>");
  }
  return {state->best, state->best_hash};
}

std::string identical_to(const Files &files, const spec::Family &family,
                         const candidate::CandidateSet &candidates, const std::string &id,
                         const Best &best) {
  if (id == best.id) {
    return "";
  }
  std::string hash = candidates.content_hash(family, id);
  if (hash == best.hash) {
    return "BEST " + best.id;
  }
  std::optional<State> state = read_state(files);
  if (state) {
    for (const RecordedAttempt &attempt : state->recorded) {
      if (attempt.hash == hash && attempt.candidate != id) {
        return attempt.candidate;
      }
    }
    for (const KeptRow &kept : state->kept) {
      if (kept.hash == hash && kept.candidate != id) {
        return kept.candidate;
      }
    }
  }
  return "";
}

} // namespace kopt::ledger
