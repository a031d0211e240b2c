#include "capture/capture.hpp"
#include "gen/shape_capture.h"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>
#include <thread>

namespace fs = std::filesystem;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("capture");

TEST_CASE("concurrent dispatch calls from threads are all counted") {
  TempDir tmp;
  fs::path file = tmp.path() / "capture.csv";
  kopt_capture::ShapeCapture capture(file.string(), "fam", {"M", "N", "K"}, 64);
  constexpr int kThreads = 8;
  constexpr int kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&capture, t] {
      for (int i = 0; i < kCalls; ++i) {
        // Four shapes shared by all threads, one of the thread's own.
        std::int64_t dims[3] = {i % 4 == 3 ? 1000 + t : 16 * (i % 4), 4096, 512};
        capture.record(dims);
      }
    });
  }
  for (auto &thread : threads) {
    thread.join();
  }
  REQUIRE(capture.write());
  CHECK_FALSE(fs::exists(file.string() + ".tmp"));
  kopt::capture::CaptureFile read = kopt::capture::read_capture(file);
  CHECK(read.family == "fam");
  CHECK(read.columns == std::vector<std::string>{"M", "N", "K"});
  REQUIRE(read.shapes.size() == 3 + kThreads);
  std::uint64_t total = 0;
  for (const auto &shape : read.shapes) {
    total += shape.count;
    if (shape.values[0] < 1000) {
      CHECK(shape.count == kThreads * kCalls / 4);
    } else {
      CHECK(shape.count == kCalls / 4);
    }
  }
  CHECK(total == kThreads * kCalls);
  CHECK(read.overflow == 0);
}

TEST_CASE("the bound keeps the first shapes and counts the calls of the rest as overflow") {
  TempDir tmp;
  fs::path file = tmp.path() / "capture.csv";
  kopt_capture::ShapeCapture capture(file.string(), "fam", {"M"}, 2);
  for (std::int64_t m : {1, 2, 1, 3, 4, 3, 2}) {
    capture.record(&m);
  }
  CHECK(capture.overflow() == 3);
  REQUIRE(capture.write());
  std::string text = kopt::util::read_file(file);
  CHECK(text ==
        "# kopt capture: family=fam calls=7 shapes=2 max=2 overflow=3\nM,count\n1,2\n2,2\n");
  kopt::capture::CaptureFile read = kopt::capture::read_capture(file);
  CHECK(read.overflow == 3);
}

TEST_CASE("merge sums several files, reorders columns and writes the configs file") {
  auto a = kopt::capture::parse_capture(
      "# kopt capture: family=g calls=5 shapes=2 max=9 overflow=1\nM,N,count\n1,8,3\n2,8,2\n",
      "a.csv");
  auto b = kopt::capture::parse_capture("N,M,count\n8,2,5\n16,4,1\n", "b.csv");
  auto merged = kopt::capture::merge_captures({a, b}, {"M", "N"}, "g");
  CHECK(merged.calls == 11);
  CHECK(merged.overflow == 1);
  CHECK(kopt::capture::configs_csv(merged) == "M,N,count\n1,8,3\n2,8,7\n4,16,1\n");

  SUBCASE("another family") {
    CHECK_THROWS_WITH(kopt::capture::merge_captures({a}, {"M", "N"}, "h"),
                      "a.csv:1: family: the capture is of family 'g', not 'h'");
  }
  SUBCASE("other columns") {
    CHECK_THROWS_WITH(kopt::capture::merge_captures({b}, {"M", "K"}, "g"),
                      "b.csv:1: columns: expected the dispatch columns M,K and count, got N,M");
  }
}

TEST_CASE("bad capture files name the file, line and column") {
  CHECK_THROWS_WITH(kopt::capture::parse_capture("# kopt capture: x\nM,count\n1,2\nx,1\n", "c.csv"),
                    "c.csv:4: M: expected an integer, got 'x'");
  CHECK_THROWS_WITH(kopt::capture::parse_capture("M,count\n1,0\n", "c.csv"),
                    "c.csv:2: count: must be at least 1, got 0");
  CHECK_THROWS_AS(kopt::capture::parse_capture("M,N\n1,2\n", "c.csv"), kopt::Error);
}

TEST_SUITE_END();
