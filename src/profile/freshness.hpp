#pragma once

// Whether a measurement still stands for what it measured. Its times are of one candidate's code
// (the content hash), on one machine (Conditions), over one configs file, compared with one
// golden, run by one harness, from one build; a change of any of them since makes it stale, and
// no command presents a stale measurement as current.

#include "profile/measurement.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <string>

namespace kopt::profile {

/// What a run measures besides the code and the machine, as it is now: the configs file's
/// content hash, the golden's (golden.json's hash, "" without one) and the harness source's.
struct MeasuredInputs {
  std::string configs_hash;
  std::string golden;
  std::string harness_source;
};

/// Returns the inputs a run of `family` measures now; a file that cannot be read hashes as "".
MeasuredInputs current_inputs(const spec::Family &family, const spec::Layout &layout);

/// Copies `inputs` into measurement `m` (taken before its run, so that a file edited while it
/// runs is caught next time).
void set_inputs(Measurement &m, const MeasuredInputs &inputs);

/// Returns what changed since measurement `m` (of candidate m.candidate) was taken, one phrase
/// naming it ("configs.csv changed since the measurement (5 configs measured, 6 now)", "the
/// golden was remade since the measurement", "the harness source harness.cpp changed since the
/// measurement", "candidate 06's build changed since the measurement: ..."), or "" when nothing
/// it recorded changed. What an older kopt did not record is not checked; neither are the content
/// hash and the machine (check_measured and stale_reason do).
std::string changed_since(const Measurement &m, const spec::Family &family,
                          const spec::Layout &layout);

} // namespace kopt::profile
