#include "util/cpu_time.hpp"

#include <doctest/doctest.h>

using kopt::util::MachineCpu;
using kopt::util::others_share;
using kopt::util::parse_proc_stat;

TEST_SUITE_BEGIN("util::cpu_time");

TEST_CASE("/proc/stat's cpu line: busy counts user, nice, system, irq, softirq and steal") {
  // A 2-core virtual machine's /proc/stat (Debian 12), its first lines.
  const std::string text = "cpu  4705 150 1120 1364 36 0 21 7 0 0\n"
                           "cpu0 2318 73 569 689 18 0 11 4 0 0\n"
                           "cpu1 2387 77 551 675 18 0 10 3 0 0\n"
                           "intr 1462898 0 9 0\n";
  const std::optional<MachineCpu> cpu = parse_proc_stat(text);
  REQUIRE(cpu);
  CHECK(cpu->busy == 4705 + 150 + 1120 + 0 + 21 + 7);
  CHECK(cpu->total == cpu->busy + 1364 + 36);
  // An old kernel's line of 8 numbers is enough; fewer, or no cpu line, is nothing.
  CHECK(parse_proc_stat("cpu 1 2 3 4 5 6 7 8\n"));
  CHECK_FALSE(parse_proc_stat("cpu 1 2 3 4 5 6 7\n"));
  CHECK_FALSE(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\nintr 4\n"));
  CHECK_FALSE(parse_proc_stat(""));
}

TEST_CASE("others' share: the machine's busy time less kopt's and its children's") {
  const MachineCpu before{1000, 5000};
  // 2 cores for 2 s at 100 ticks a second: 400 ticks; 300 busy, 1 s (100 ticks) of them kopt's.
  CHECK(others_share(before, {1300, 5400}, 1.0, 100) == doctest::Approx(0.5));
  // An idle machine but for kopt: none.
  CHECK(others_share(before, {1100, 5400}, 1.0, 100) == 0);
  // kopt's own time counted a little over the machine's (rounding of the two clocks): still 0.
  CHECK(others_share(before, {1100, 5400}, 1.2, 100) == 0);
  // A machine busy with others throughout: all of it.
  CHECK(others_share(before, {1400, 5400}, 0.0, 100) == 1);
  // No time passed, or counters that went back: not known.
  CHECK(others_share(before, before, 0.0, 100) == -1);
  CHECK(others_share(before, {900, 5400}, 0.0, 100) == -1);
}

TEST_CASE("this machine's counters advance, and kopt's own time is counted") {
  const std::optional<MachineCpu> before = kopt::util::machine_cpu();
  if (!before) {
    MESSAGE("no /proc/stat here");
    return;
  }
  const double own = kopt::util::own_cpu_seconds();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) {
    x = x + 1e-9 * i;
  }
  CHECK(kopt::util::own_cpu_seconds() > own);
  const std::optional<MachineCpu> after = kopt::util::machine_cpu();
  REQUIRE(after);
  CHECK(after->total > before->total);
  CHECK(after->busy >= before->busy);
}

TEST_SUITE_END();
