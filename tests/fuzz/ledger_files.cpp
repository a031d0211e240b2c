// The ledger's files and the decision beside them: state.json (with attempts.jsonl),
// attempts.jsonl alone, decision.json and calibration.json. The first byte picks the file.
#include "decide/decide.hpp"
#include "fuzz_target.hpp"
#include "ledger/ledger.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) {
    return 0;
  }
  static const kopt::ledger::Files files{kopt::fuzz::scratch() / "ledger"};
  static const std::filesystem::path decision = kopt::fuzz::scratch() / "decision.json";
  static const std::filesystem::path calibration = kopt::fuzz::scratch() / "calibration.json";
  std::string_view text = kopt::fuzz::text_of(data + 1, size - 1);
  std::error_code ec;
  std::filesystem::remove(files.attempts(), ec);
  std::filesystem::remove(files.state(), ec);
  switch (data[0] % 4) {
  case 0:
    kopt::fuzz::write(files.state(), text);
    kopt::fuzz::expect_contract(files.state().string(), [&] {
      if (auto state = kopt::ledger::read_state(files)) {
        kopt::ledger::render_performance(*state, kopt::ledger::read_attempts(files.attempts()));
        kopt::ledger::format_status(*state);
        kopt::ledger::state_from_json(kopt::ledger::to_json(*state), files.state().string());
      }
    });
    break;
  case 1:
    kopt::fuzz::write(files.attempts(), text);
    kopt::fuzz::expect_contract(files.attempts().string(), [&] {
      kopt::ledger::render_performance(kopt::ledger::State{},
                                       kopt::ledger::read_attempts(files.attempts()));
    });
    break;
  case 2:
    kopt::fuzz::write(decision, text);
    kopt::fuzz::expect_contract(decision.string(), [&] {
      kopt::decide::Decision d = kopt::decide::read_decision(decision);
      kopt::decide::format_table(d);
      kopt::decide::format_verdict(d);
      kopt::decide::decision_from_json(kopt::decide::to_json(d), decision.string());
    });
    break;
  default:
    kopt::fuzz::write(calibration, text);
    kopt::fuzz::expect_contract(calibration.string(),
                                [&] { kopt::decide::read_calibration(calibration); });
    break;
  }
  return 0;
}
