#include "decide/decide.hpp"

#include <doctest/doctest.h>

using kopt::decide::Decision;
using kopt::decide::Options;
using kopt::decide::Request;
using kopt::decide::Verdict;
using kopt::decide::Weighting;
using kopt::profile::Measurement;

namespace {

// One class of two configs with call counts 1 and 9; the candidate's times are BEST's scaled
// per config (`hot` for the config called 9 times).
Measurement counted(const std::string &id, double cold = 1, double hot = 1,
                    bool with_count = true) {
  Measurement m;
  m.family = "gemm";
  m.candidate = id;
  m.hash = "hash" + id;
  m.measured_by = kopt::profile::Source::ncu;
  m.device = "NVIDIA H200";
  m.date = "2026-01-" + id + "T00:00:00Z";
  m.config_columns =
      with_count ? std::vector<std::string>{"M", "count"} : std::vector<std::string>{"M"};
  auto values = [&](const char *mv, const char *count) {
    return with_count ? std::vector<std::string>{mv, count} : std::vector<std::string>{mv};
  };
  m.configs = {{values("16", "1"), "all", "k", 100 * cold, 110, 0, true},
               {values("32", "9"), "all", "k", 100 * hot, 110, 0, true}};
  return m;
}

} // namespace

TEST_SUITE_BEGIN("decide::weighting");

TEST_CASE("count weighting follows the shapes production calls most") {
  // The rarely called shape gets 10% faster, the hot one 3% slower.
  Measurement best = counted("00");
  Measurement candidate = counted("01", 0.9, 1.03);
  Options options;
  Decision equal = kopt::decide::decide(best, candidate, Request{});
  CHECK(equal.classes.at(0).ratio == doctest::Approx(std::sqrt(0.9 * 1.03)));
  CHECK(equal.verdict == Verdict::keep);

  options.weighting = Weighting::count;
  Decision weighted = kopt::decide::decide(best, candidate, Request{}, options);
  CHECK(weighted.classes.at(0).ratio ==
        doctest::Approx(std::exp((std::log(0.9) + 9 * std::log(1.03)) / 10)));
  CHECK(weighted.verdict == Verdict::regression);
}

TEST_CASE("count weighting without a count column fails and says how to get one") {
  Options options;
  options.weighting = Weighting::count;
  Decision d = kopt::decide::decide(counted("00", 1, 1, false), counted("01", 0.9, 0.9, false),
                                    Request{}, options);
  CHECK(d.verdict == Verdict::failed);
  CHECK(d.reason == "weighting by count needs a 'count' column in the configs (columns: M); "
                    "make one with kopt capture merge");
}

TEST_SUITE_END();
