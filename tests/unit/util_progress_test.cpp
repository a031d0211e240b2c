#include "util/progress.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

using kopt::util::StatusLine;
using kopt::util::StatusStyle;

namespace {

// A status line on a string with a clock the test moves.
struct Shown {
  std::ostringstream out;
  double now = 100;
  StatusLine line;

  explicit Shown(StatusStyle style, int width = 0)
      : line(out, style, width, [this] { return now; }) {}
};

} // namespace

TEST_SUITE_BEGIN("util::progress");

TEST_CASE("status_text: done/total, elapsed, and the time left once a unit is done") {
  CHECK(kopt::util::status_text(0, 40, 0, "tune") == "[0/40] elapsed 0:00: tune");
  CHECK(kopt::util::status_text(10, 40, 12, "x") == "[10/40] elapsed 0:12, ~0:36 left: x");
  CHECK(kopt::util::status_text(40, 40, 75, "") == "[40/40] elapsed 1:15, ~0:00 left");
  CHECK(kopt::util::format_duration(3725) == "1:02:05");
  CHECK(kopt::util::format_duration(-1) == "0:00");
}

TEST_CASE("on a terminal one line is rewritten in place and a note stays above it") {
  Shown s(StatusStyle::terminal);
  s.line.begin("bench", 4);
  s.now += 2;
  s.line.advance(1, "round 1/2: BEST 00");
  s.line.note("round 1/2: candidate 01 failed: crashed");
  s.line.end();
  CHECK(s.out.str() == "\r[0/4] elapsed 0:00: bench\x1b[K"
                       "\r[1/4] elapsed 0:02, ~0:06 left: round 1/2: BEST 00\x1b[K"
                       "\r\x1b[Kround 1/2: candidate 01 failed: crashed\n"
                       "\r[1/4] elapsed 0:02, ~0:06 left\x1b[K"
                       "\n");
}

TEST_CASE("a terminal's line is cut to its width, so it never wraps") {
  Shown s(StatusStyle::terminal, 20);
  s.line.begin("a long description of the step", 2);
  CHECK(s.out.str() == "\r[0/2] elapsed 0:00:\x1b[K");
}

TEST_CASE("piped: plain lines without control characters; quiet: nothing") {
  Shown piped(StatusStyle::lines);
  piped.line.begin("tune: 8 rows to measure", 8);
  piped.line.starting("k1 on configs 1-4");
  piped.now += 4;
  piped.line.advance(4, "k1 on configs 1-4: 4 rows");
  piped.line.note("k2 failed");
  piped.line.end();
  CHECK(piped.out.str() == "tune: 8 rows to measure\n"
                           "[4/8] elapsed 0:04, ~0:04 left: k1 on configs 1-4: 4 rows\n"
                           "k2 failed\n");
  Shown quiet(StatusStyle::quiet);
  quiet.line.begin("tune", 8);
  quiet.line.advance(8, "done");
  quiet.line.note("failed");
  quiet.line.end();
  CHECK(quiet.out.str().empty());
}

TEST_CASE("status_style: a pipe is not a terminal, --quiet wins") {
  CHECK(kopt::util::status_style(-1, false) == StatusStyle::lines);
  CHECK(kopt::util::status_style(-1, true) == StatusStyle::quiet);
}

TEST_SUITE_END();
