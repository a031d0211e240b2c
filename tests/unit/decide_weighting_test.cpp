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

TEST_CASE("traffic rows weigh each config by its calls times BEST's time") {
  // The rarely called config takes 900 us, the hot one 100 us, called 9 times: each is half of
  // the application's kernel time. The rare one gets 10% faster, the hot one 3% slower.
  Measurement best = counted("00");
  best.configs[0].us = 900;
  Measurement candidate = counted("01", 0.9, 1.03);
  candidate.configs[0].us = 900 * 0.9;
  Decision d = kopt::decide::decide(best, candidate, Request{});
  REQUIRE(d.traffic);
  CHECK(d.traffic->calls == 10);
  CHECK(d.traffic->overall.best_us == doctest::Approx(1800));
  CHECK(d.traffic->overall.candidate_us == doctest::Approx(810 + 927));
  CHECK(d.traffic->overall.change == doctest::Approx((810.0 + 927) / 1800 - 1));
  REQUIRE(d.traffic->classes.size() == 1);
  CHECK(d.traffic->classes[0].share == doctest::Approx(1));
  // Equal weights judge the geomean (keep); the traffic rows are reported beside it.
  CHECK(d.verdict == Verdict::keep);
  CHECK(d.judged_classes().data() == d.classes.data());

  Options options;
  options.weighting = Weighting::traffic;
  Decision t = kopt::decide::decide(best, candidate, Request{}, options);
  // -3.5% of the application's kernel time: beyond the 1% threshold, a keep on traffic too.
  CHECK(t.verdict == Verdict::keep);
  CHECK(t.reason.find("judged on the traffic-weighted classes") != std::string::npos);

  // The same changes where the hot config is also the long one: traffic says regression.
  best.configs[0].us = 100;
  candidate.configs[0].us = 90;
  Decision r = kopt::decide::decide(best, candidate, Request{}, options);
  CHECK(r.traffic->overall.change == doctest::Approx((90.0 + 9 * 103) / 1000 - 1));
  CHECK(r.verdict == Verdict::regression);
  CHECK(r.counts_as_regression());
}

TEST_CASE("traffic rows of a side-by-side measurement carry an interval, and survive JSON") {
  Measurement best = counted("00");
  Measurement candidate = counted("01", 0.9, 0.95);
  candidate.paired_best = "00";
  candidate.paired_best_hash = best.hash;
  // Four rounds, three samples each; the candidate's hot config is 5% faster with some noise.
  const double noise[4] = {1.0, 1.004, 0.997, 1.002};
  const double own[4] = {1.002, 0.998, 1.001, 0.999}; // the candidate's side of each round
  for (size_t c = 0; c < 2; ++c) {
    for (size_t k = 0; k < 4; ++k) {
      double n = noise[k];
      best.configs[c].rounds.push_back({100 * n, 100 * n, 100 * n});
      double f = (c == 0 ? 0.9 : 0.95) * own[k];
      candidate.configs[c].rounds.push_back({100 * f * n, 100 * f * n * 1.001, 100 * f * n});
    }
  }
  Options options;
  options.weighting = Weighting::traffic;
  Decision d = kopt::decide::decide(best, candidate, Request{}, options);
  REQUIRE(d.traffic);
  REQUIRE(d.traffic->overall.has_interval);
  CHECK(d.traffic->overall.change == doctest::Approx((90.0 + 9 * 95) / 1000 - 1).epsilon(0.001));
  CHECK(d.traffic->overall.low < d.traffic->overall.change);
  CHECK(d.traffic->overall.high > d.traffic->overall.change);
  CHECK(d.verdict == Verdict::keep);

  Decision back = kopt::decide::decision_from_json(kopt::decide::to_json(d), "decision.json");
  REQUIRE(back.traffic);
  CHECK(back.options.weighting == Weighting::traffic);
  CHECK(back.traffic->calls == 10);
  CHECK(back.traffic->overall.low == doctest::Approx(d.traffic->overall.low));
  CHECK(back.traffic->classes.at(0).share == doctest::Approx(1));
  CHECK(kopt::decide::format_traffic(back).find("the application's kernel time: -5.50%") !=
        std::string::npos);

  // No count column, no traffic rows; weighting by traffic then fails and says why.
  Decision none = kopt::decide::decide(counted("00", 1, 1, false), counted("01", 0.9, 0.9, false),
                                       Request{}, options);
  CHECK(none.verdict == Verdict::failed);
  CHECK(none.reason.find("weighting by traffic needs a 'count' column") != std::string::npos);
}

TEST_SUITE_END();
