#include "decide/correctness.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

namespace kopt::decide {

using harness::config_label;
using profile::ConfigResult;
using profile::Measurement;

bool is_correct(const ConfigResult &config) { return config.err_known && config.err == 0; }

std::vector<std::string> correctness_problems(const Measurement &m, const std::string &id,
                                              const std::string &expected_hash) {
  std::vector<std::string> problems;
  if (!m.ok()) {
    problems.push_back("failed: " + m.reason);
    return problems;
  }
  if (m.hash != expected_hash) {
    problems.push_back("identity: the harness printed hash '" + m.hash + "', candidate " + id +
                       "'s sources hash to " + expected_hash + " (a stale or foreign binary)");
  }
  std::vector<std::string> wrong;
  for (const auto &c : m.configs) {
    if (is_correct(c)) {
      continue;
    }
    std::string config = config_label(m.config_columns, c.values);
    if (!c.check.empty()) {
      wrong.push_back(config + ": err " + util::format_number(c.err, 4) + ": " + c.check +
                      " (kernel " + c.kernel + ")");
    } else if (!c.err_known) {
      wrong.push_back(config + ": no error reported (was the golden compared?)");
    } else {
      wrong.push_back(config + ": err " + util::format_number(c.err, 4) + " (kernel " + c.kernel +
                      ")");
    }
  }
  if (!wrong.empty()) {
    problems.push_back("incorrect: " + std::to_string(wrong.size()) + " of " +
                       std::to_string(m.configs.size()) + " configs have err != 0:\n    " +
                       util::join(wrong, "\n    "));
  }
  return problems;
}

namespace {

std::string shown(const std::string &value) { return value.empty() ? "(none)" : value; }

[[noreturn]] void refuse_field(const std::string &file, const std::string &field,
                               const std::string &expected, const std::string &got,
                               const std::string &why, const std::string &remedy) {
  throw Error(file + ": " + field + ": expected " + shown(expected) + ", got " + shown(got) + ": " +
              why + "; " + remedy);
}

} // namespace

void check_measured(const Measurement &m, const std::string &file, const Identity &expected,
                    const Identity &best, const std::string &remedy) {
  if (m.candidate != expected.id) {
    refuse_field(file, "candidate", expected.id, m.candidate, "a measurement of another candidate",
                 remedy);
  }
  // A harness that failed before it printed its hash leaves none; any hash it printed must be
  // the content's now.
  bool printed = !m.hash.empty() || m.ok();
  if (!expected.hash.empty() && printed && m.hash != expected.hash) {
    refuse_field(file, "hash", expected.hash, m.hash,
                 "measured from other content than candidate " + expected.id + "'s now", remedy);
  }
  if (m.paired_best.empty()) {
    return;
  }
  if (m.paired_best != best.id) {
    refuse_field(file, "paired_best", best.id, m.paired_best,
                 "measured beside another candidate than BEST", remedy);
  }
  // A candidate that failed in the first round, before BEST's harness ran (candidate-first),
  // was measured beside no BEST hash: it is decided as failed, never kept.
  bool best_ran = !m.paired_best_hash.empty() || m.ok();
  if (!best.hash.empty() && best_ran && m.paired_best_hash != best.hash) {
    refuse_field(file, "paired_best_hash", best.hash, m.paired_best_hash,
                 "measured beside other content than BEST " + best.id + "'s", remedy);
  }
}

} // namespace kopt::decide
