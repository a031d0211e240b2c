#include "decide/decide.hpp"

#include <doctest/doctest.h>

using kopt::profile::ConfigResult;
using kopt::profile::Measurement;

namespace {

// A correctness run of candidate 01 over M and N: three configs, all matching the golden.
Measurement checked() {
  Measurement m;
  m.candidate = "01";
  m.hash = "aaaa";
  m.config_columns = {"M", "N"};
  m.configs = {{{"16", "64"}, "small", "k_small", 1, 1, 0, true},
               {{"32", "64"}, "small", "k_small", 1, 1, 0, true},
               {{"1024", "64"}, "large", "k_large", 1, 1, 0, true}};
  return m;
}

} // namespace

TEST_SUITE_BEGIN("decide::correctness");

TEST_CASE("a config is correct only when compared against the golden with err 0") {
  ConfigResult c{{"16"}, "small", "k", 1, 1, 0, true};
  CHECK(kopt::decide::is_correct(c));
  c.err = 0.001;
  CHECK_FALSE(kopt::decide::is_correct(c));
  c.err = 0;
  c.err_known = false;
  CHECK_FALSE(kopt::decide::is_correct(c));
}

TEST_CASE("a correct run has no problems") {
  CHECK(kopt::decide::correctness_problems(checked(), "01", "aaaa").empty());
}

TEST_CASE("wrong and unchecked configs are listed with their kernel") {
  Measurement m = checked();
  m.configs[1].err = 0.125;
  m.configs[2].err_known = false;
  std::vector<std::string> problems = kopt::decide::correctness_problems(m, "01", "aaaa");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "incorrect: 2 of 3 configs have err != 0:\n"
                       "    M=32,N=64: err 0.125 (kernel k_small)\n"
                       "    M=1024,N=64: no error reported (was the golden compared?)");
}

TEST_CASE("another hash is an identity problem, beside the incorrect configs") {
  Measurement m = checked();
  m.hash = "bbbb";
  m.configs[0].err = 1;
  std::vector<std::string> problems = kopt::decide::correctness_problems(m, "01", "aaaa");
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "identity: the harness printed hash 'bbbb', candidate 01's sources hash "
                       "to aaaa (a stale or foreign binary)");
  CHECK(problems[1] == "incorrect: 1 of 3 configs have err != 0:\n"
                       "    M=16,N=64: err 1 (kernel k_small)");
}

TEST_CASE("a run that failed says only why") {
  Measurement m = checked();
  m.status = "failed";
  m.reason = "the harness crashed (signal 11)";
  CHECK(kopt::decide::correctness_problems(m, "01", "aaaa") ==
        std::vector<std::string>{"failed: the harness crashed (signal 11)"});
}

TEST_CASE("the keep test applies the same rule: an unchecked config makes the verdict incorrect") {
  Measurement best = checked();
  best.candidate = "00";
  Measurement candidate = checked();
  candidate.configs[0].err_known = false;
  kopt::decide::Decision d = kopt::decide::decide(best, candidate, {});
  CHECK(d.verdict == kopt::decide::Verdict::incorrect);
  CHECK(d.reason == "1 of 3 configs have err != 0: M=16,N=64 (err not compared)");
  REQUIRE(d.incorrect.size() == 1);
  CHECK_FALSE(d.incorrect[0].err_known);
}

TEST_SUITE_END();
