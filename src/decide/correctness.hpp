#pragma once
// The correctness rule and the identity of a measurement: what a candidate's results must be
// before its times count.

#include "profile/measurement.hpp"

#include <string>
#include <vector>

namespace kopt::decide {

/// The correctness rule for one config: its output was compared against the golden and its
/// err is 0 (harness timing never excuses a wrong or unchecked output).
bool is_correct(const profile::ConfigResult &config);

/// What a correctness run of candidate `id` breaks, one problem per line group: "failed: ..." when
/// it did not run, "identity: ..." when it printed another hash than `expected_hash`, and
/// "incorrect: ..." listing every config that is not is_correct(). Empty: the candidate is correct.
std::vector<std::string> correctness_problems(const profile::Measurement &m, const std::string &id,
                                              const std::string &expected_hash);

/// Who a measurement or decision must be of: a candidate's id and its content hash now.
struct Identity {
  std::string id;
  std::string hash; ///< empty: not checked
};

/// Checks that measurement `m`, read from `file`, is of `expected` (its candidate id, and its
/// hash: one that printed none must have failed) and, when it was measured side by side, beside
/// `best`; throws kopt::Error "<file>: <field>: expected <x>, got <y>: <why>; <remedy>" otherwise.
void check_measured(const profile::Measurement &m, const std::string &file,
                    const Identity &expected, const Identity &best, const std::string &remedy);

} // namespace kopt::decide
