#include "decide/decide.hpp"
#include "decide/plausible.hpp"
#include "gpu/peak.hpp"

#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::decide::decide;
using kopt::decide::Decision;
using kopt::decide::Request;
using kopt::decide::Verdict;
using kopt::profile::Measurement;
using kopt::profile::Source;
using kopt::spec::Formula;

namespace {

// Two classes on an H200: decode (M=16, two configs) and prefill (M=4096, one config); the
// times are `decode` and `prefill` us for every decode config and the prefill one.
Measurement measured(const std::string &id, double decode, double prefill,
                     const std::string &device = "NVIDIA H200") {
  Measurement m;
  m.family = "gemm";
  m.candidate = id;
  m.hash = "hash" + id;
  m.measured_by = Source::cupti;
  m.device = device;
  m.config_columns = {"M", "N", "K"};
  m.configs = {{{"16", "6144", "4096"}, "decode", "k", decode, decode, 0, true},
               {{"16", "4096", "4096"}, "decode", "k", decode, decode, 0, true},
               {{"4096", "6144", "4096"}, "prefill", "k", prefill, prefill, 0, true}};
  return m;
}

// fp8 A and B, bf16 C: bytes M*K + N*K + 2*M*N, flops 2*M*N*K at the fp8 peak.
Request with_roofline(std::vector<kopt::spec::Peak> peaks = {}) {
  kopt::spec::Roofline roofline;
  roofline.bytes = Formula::parse("M*K + N*K + 2*M*N", "bytes");
  roofline.flops = Formula::parse("2*M*N*K", "flops");
  roofline.math = "fp8";
  roofline.peaks = std::move(peaks);
  Request r;
  r.roofline = roofline;
  return r;
}

// The limits on an H200 (4.8 TB/s, 1979 TFLOP/s fp8), in us.
const double kDecode6144 = (16.0 * 4096 + 6144.0 * 4096 + 2 * 16.0 * 6144) / 4.8e6; // 5.2975
const double kDecode4096 = (16.0 * 4096 + 4096.0 * 4096 + 2 * 16.0 * 4096) / 4.8e6; // 3.5362
const double kPrefill = 2.0 * 4096 * 6144 * 4096 / 1979e6;                          // 104.17

} // namespace

TEST_SUITE_BEGIN("decide::plausible");

TEST_CASE("each class's fraction of the device's limit: bytes or flops, whichever is longer") {
  Decision d = decide(measured("00", 10, 200), measured("01", 8, 150), with_roofline());
  CHECK(d.verdict == Verdict::keep);
  REQUIRE(d.speed_of_light);
  const auto &light = *d.speed_of_light;
  CHECK(light.device == "NVIDIA H200");
  CHECK(light.peak == "4.8 TB/s, 1979 TFLOP/s fp8 (kopt's table: NVIDIA H200 SXM)");
  CHECK(light.missing.empty());
  REQUIRE(light.classes.size() == 3);
  CHECK(light.classes[0].config_class == "decode");
  CHECK(light.classes[0].configs == 2);
  CHECK(light.classes[0].limit_us == doctest::Approx(std::sqrt(kDecode6144 * kDecode4096)));
  CHECK(light.classes[0].best_fraction ==
        doctest::Approx(std::sqrt(kDecode6144 / 10 * kDecode4096 / 10)));
  CHECK(light.classes[0].candidate_fraction ==
        doctest::Approx(std::sqrt(kDecode6144 / 8 * kDecode4096 / 8)));
  CHECK(light.classes[1].config_class == "prefill");
  CHECK(light.classes[1].limit_us == doctest::Approx(kPrefill)); // compute bound
  CHECK(light.classes[1].candidate_fraction == doctest::Approx(kPrefill / 150));
  CHECK(light.classes[2].config_class == "overall");
  CHECK(light.classes[2].configs == 3);
  CHECK(light.classes[2].candidate_fraction ==
        doctest::Approx(std::cbrt(kDecode6144 / 8 * kDecode4096 / 8 * kPrefill / 150)));

  std::string table = kopt::decide::format_speed_of_light(light);
  CHECK(table.find("speed of light on NVIDIA H200, peaks 4.8 TB/s, 1979 TFLOP/s fp8") == 0);
  CHECK(table.find("\ndecode        2        4.328     43.3%     54.1%\n") != std::string::npos);
  CHECK(table.find("\nprefill       1        104.2     52.1%     69.4%\n") != std::string::npos);
}

TEST_CASE("a candidate faster than the device allows is refused, naming the config and figure") {
  Decision d = decide(measured("00", 10, 200), measured("01", 4, 150), with_roofline());
  CHECK(d.verdict == Verdict::failed);
  CHECK(d.reason == "impossible time: candidate 01 ran 1 config faster than NVIDIA H200 can: "
                    "M=16,N=6144,K=4096 in 4 us, below the 5.297 us of moving its 25.43 MB at "
                    "4.8 TB/s (peaks 4.8 TB/s, 1979 TFLOP/s fp8 (kopt's table: NVIDIA H200 SXM)); "
                    "a measurement faster than the device allows is refused");
  CHECK_FALSE(d.counts_as_regression());
  REQUIRE(d.speed_of_light);
  CHECK(d.speed_of_light->classes[0].candidate_fraction > 1);

  SUBCASE("compute bound: the flops figure is named") {
    Decision f = decide(measured("00", 10, 200), measured("01", 8, 100), with_roofline());
    CHECK(f.verdict == Verdict::failed);
    CHECK(f.reason.find("M=4096,N=6144,K=4096 in 100 us, below the 104.2 us of its 206.2 GFLOP "
                        "at 1979 TFLOP/s") != std::string::npos);
  }
  SUBCASE("an impossible BEST is named too, and nothing is judged against it") {
    Decision f = decide(measured("00", 3, 200), measured("01", 8, 150), with_roofline());
    CHECK(f.verdict == Verdict::failed);
    CHECK(f.reason.find("BEST 00 ran 2 configs faster than NVIDIA H200 can: M=16,N=6144,K=4096 "
                        "in 3 us") != std::string::npos);
    CHECK(f.reason.find("candidate 01") == std::string::npos);
  }
  SUBCASE("BEST's own keep test fails on an impossible time") {
    Decision f = decide(measured("00", 3, 200), measured("00", 3, 200), with_roofline());
    CHECK(f.verdict == Verdict::failed);
    CHECK(f.reason.find("candidate 00 ran 2 configs") != std::string::npos);
  }
  SUBCASE("an incorrect candidate stays incorrect") {
    Measurement wrong = measured("01", 4, 150);
    wrong.configs[0].err = 0.5;
    CHECK(decide(measured("00", 10, 200), wrong, with_roofline()).verdict == Verdict::incorrect);
  }
  SUBCASE("without a roofline the same times are decided, with no fractions") {
    Decision f = decide(measured("00", 10, 200), measured("01", 4, 150), Request{});
    CHECK(f.verdict == Verdict::keep);
    CHECK_FALSE(f.speed_of_light);
  }
}

TEST_CASE("peaks: the family's declaration first, then kopt's table, else no fractions") {
  SUBCASE("a device the table lacks has no fractions and no gate") {
    Decision d = decide(measured("00", 10, 200, "Some CPU"), measured("01", 0.001, 150, "Some CPU"),
                        with_roofline());
    CHECK(d.verdict == Verdict::keep);
    REQUIRE(d.speed_of_light);
    CHECK(d.speed_of_light->missing ==
          "no peak known for device 'Some CPU': declare one in family.json's roofline.peaks");
    CHECK(d.speed_of_light->classes.empty());
    CHECK(kopt::decide::format_speed_of_light(*d.speed_of_light) ==
          "speed of light: no peak known for device 'Some CPU': declare one in family.json's "
          "roofline.peaks\n");
  }
  SUBCASE("a declared peak for the device replaces the table's rate, the other rate stays") {
    Decision d = decide(measured("00", 10, 200), measured("01", 8, 150),
                        with_roofline({{"CPU", 1, 0}, {"H200", 1e12, 0}}));
    CHECK(d.verdict == Verdict::failed); // 25 MB at 1 TB/s take 25 us
    CHECK(d.speed_of_light->peak == "1 TB/s, 1979 TFLOP/s fp8 (family.json roofline.peaks[1], "
                                    "else kopt's table: NVIDIA H200 SXM)");
  }
  SUBCASE("'*' declares for any device") {
    Decision d = decide(measured("00", 10, 200, "Some CPU"), measured("01", 8, 150, "Some CPU"),
                        with_roofline({{"*", 0, 1e16}}));
    CHECK(d.verdict == Verdict::keep);
    CHECK(d.speed_of_light->peak == "10 PFLOP/s fp8 (family.json roofline.peaks[0])");
    CHECK(d.speed_of_light->classes[0].limit_us ==
          doctest::Approx(2 * 16 * 4096 * 4096 / 1e10 * std::sqrt(6144.0 / 4096)));
  }
}

TEST_CASE("kopt's table of devices") {
  using kopt::gpu::known_peak;
  CHECK(known_peak("NVIDIA H200")->bytes_per_s == 4.8e12);
  CHECK(known_peak("NVIDIA H200 NVL")->model == "NVIDIA H200 NVL");
  CHECK(known_peak("NVIDIA GH200 480GB")->model == "NVIDIA GH200");
  CHECK(known_peak("NVIDIA H100 80GB HBM3")->bytes_per_s == 3.35e12);
  CHECK(known_peak("NVIDIA H100 PCIe")->bytes_per_s == 2.0e12);
  CHECK(known_peak("AMD Instinct MI300X")->bytes_per_s == 5.3e12);
  CHECK_FALSE(known_peak("Intel(R) Xeon(R) Platinum 8480+"));
  auto a100 = known_peak("NVIDIA A100-SXM4-80GB");
  CHECK(a100->flops_per_s("bf16") == 312e12);
  CHECK(a100->flops_per_s("fp8") == 624e12); // no fp8 units: its fastest bounds
  CHECK(a100->flops_per_s("") == 624e12);
}

TEST_CASE("decision.json keeps the fractions, and refuses bad ones") {
  Decision d = decide(measured("00", 10, 200), measured("01", 8, 150), with_roofline());
  Decision back = kopt::decide::decision_from_json(kopt::decide::to_json(d), "decision.json");
  REQUIRE(back.speed_of_light);
  CHECK(back.speed_of_light->peak == d.speed_of_light->peak);
  REQUIRE(back.speed_of_light->classes.size() == 3);
  CHECK(back.speed_of_light->classes[1].candidate_fraction ==
        d.speed_of_light->classes[1].candidate_fraction);

  nlohmann::json j = kopt::decide::to_json(d);
  j["speed_of_light"]["classes"][0]["best_fraction"] = -1;
  CHECK_THROWS_WITH_AS(kopt::decide::decision_from_json(j, "decision.json"),
                       "decision.json: speed_of_light: classes[0]: best_fraction: expected a "
                       "finite number >= 0, got -1",
                       kopt::Error);
  j.erase("speed_of_light"); // written before the roofline existed
  CHECK_FALSE(kopt::decide::decision_from_json(j, "decision.json").speed_of_light);
}

TEST_SUITE_END();
