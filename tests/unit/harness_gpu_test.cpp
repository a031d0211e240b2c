#include <kopt/harness/gpu.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

using namespace kopt::harness;

namespace {

// A runtime that logs the calls gpu.hpp makes, with host memory for device memory and events
// that elapse `elapsed_ms`, so the code the cuda and hip backends share is checked without a GPU.
struct FakeRuntime {
  enum Status { ok, bad };
  struct FakeStream {};
  struct FakeEvent {};
  using Stream = FakeStream *;
  using Event = FakeEvent *;
  static constexpr Status success = ok;

  static inline std::vector<std::string> log;
  static inline Status malloc_status = ok;
  static inline int l2_bytes = 0;
  static inline float elapsed_ms = 0;

  static const char *error_name(Status) { return "fakeErrorBad"; }
  static const char *error_string(Status) { return "out of fake memory"; }
  static Status malloc(void **ptr, std::size_t bytes) {
    log.push_back("malloc " + std::to_string(bytes));
    if (malloc_status == ok) {
      *ptr = ::operator new(bytes);
    }
    return malloc_status;
  }
  static Status free(void *ptr) {
    log.push_back("free");
    ::operator delete(ptr);
    return ok;
  }
  static Status malloc_async(void **ptr, std::size_t bytes, Stream) {
    log.push_back("malloc_async " + std::to_string(bytes));
    *ptr = ::operator new(bytes);
    return ok;
  }
  static Status free_async(void *ptr, Stream) {
    log.push_back("free_async");
    ::operator delete(ptr);
    return ok;
  }
  static Status get_device(int *device) {
    *device = 3;
    return ok;
  }
  static Status l2_cache_bytes(int *bytes, int device) {
    log.push_back("l2 of device " + std::to_string(device));
    *bytes = l2_bytes;
    return ok;
  }
  static Status arch(std::string *arch, int) {
    *arch = "fake_1";
    return ok;
  }
  static Status compute_units(int *units, int) {
    *units = 7;
    return ok;
  }
  static Status memset_async(void *, int value, std::size_t bytes, Stream) {
    log.push_back("memset " + std::to_string(bytes) + " to " + std::to_string(value));
    return ok;
  }
  static Status read_async(const void *, std::size_t bytes, Stream) {
    log.push_back("read " + std::to_string(bytes));
    return ok;
  }
  static Status copy_device_async(void *dst, const void *src, std::size_t bytes, Stream) {
    log.push_back("copy " + std::to_string(bytes) + " device to device");
    std::memcpy(dst, src, bytes);
    return ok;
  }
  static Status copy_to_host_async(void *dst, const void *src, std::size_t bytes, Stream) {
    log.push_back("copy " + std::to_string(bytes) + " to host");
    std::memcpy(dst, src, bytes);
    return ok;
  }
  static Status stream_synchronize(Stream) {
    log.push_back("stream synchronize");
    return ok;
  }
  // Fake device memory is host memory: fp32 outputs are compared by the host's compare().
  static Status compare_async(const void *output, gpu::Dtype, const float *reference, std::size_t n,
                              Tolerance tolerance, gpu::DeviceTally *tally, Stream) {
    log.push_back("compare " + std::to_string(n));
    const float *x = static_cast<const float *>(output);
    const Comparison c = compare(std::vector<float>(x, x + n),
                                 std::vector<float>(reference, reference + n), tolerance);
    tally->mismatches = c.mismatches;
    tally->nans = c.nans;
    std::memcpy(&tally->max_abs_bits, &c.max_abs, sizeof c.max_abs);
    std::memcpy(&tally->max_rel_bits, &c.max_rel, sizeof c.max_rel);
    return ok;
  }
  static Status event_create(Event *event) {
    *event = new FakeEvent;
    return ok;
  }
  static Status event_destroy(Event event) {
    log.push_back("event destroy");
    delete event;
    return ok;
  }
  static Status event_record(Event, Stream) {
    log.push_back("event record");
    return ok;
  }
  static Status event_synchronize(Event) {
    log.push_back("event synchronize");
    return ok;
  }
  static Status event_elapsed_ms(float *ms, Event, Event) {
    *ms = elapsed_ms;
    return ok;
  }
  static Status profiler_start() {
    log.push_back("profiler start");
    return ok;
  }
  static Status profiler_stop() {
    log.push_back("profiler stop");
    return ok;
  }
  static Status mark_timed_end(Stream) {
    log.push_back("timed end");
    return ok;
  }

  static void reset() {
    log.clear();
    malloc_status = ok;
    l2_bytes = 0;
    elapsed_ms = 0;
  }
};

// A problem that logs run() and sync() into the fake runtime's log, to check their order
// against the events.
class LoggingProblem : public Problem {
public:
  void fill_inputs(Rng &) override {}
  void poison_output() override {}
  void run() override { FakeRuntime::log.push_back("run"); }
  void sync() override { FakeRuntime::log.push_back("sync"); }
  std::vector<float> output() override { return {}; }
};

using Log = std::vector<std::string>;

} // namespace

TEST_SUITE_BEGIN("harness::gpu");

TEST_CASE("check throws file:line: what: error name: error text, and only on failure") {
  gpu::check<FakeRuntime>(FakeRuntime::ok, "f(x)", "harness.cu", 7);
  REQUIRE_THROWS_WITH(gpu::check<FakeRuntime>(FakeRuntime::bad, "f(x)", "harness.cu", 7),
                      "harness.cu:7: f(x): fakeErrorBad: out of fake memory");
}

TEST_CASE("a device buffer allocates once, moves its memory and frees it once") {
  FakeRuntime::reset();
  {
    gpu::DeviceBuffer<float, FakeRuntime> empty;
    CHECK(empty.get() == nullptr);
    gpu::DeviceBuffer<float, FakeRuntime> none(0);
    CHECK(none.get() == nullptr);
    gpu::DeviceBuffer<float, FakeRuntime> a(10);
    CHECK(a.size() == 10);
    CHECK(a.bytes() == 40);
    float *data = a.get();
    gpu::DeviceBuffer<float, FakeRuntime> b(std::move(a));
    CHECK(b.get() == data);
    CHECK(a.get() == nullptr);
    CHECK(a.size() == 0);
    empty = std::move(b);
    CHECK(empty.get() == data);
  }
  CHECK(FakeRuntime::log == Log{"malloc 40", "free"});
}

TEST_CASE("a device buffer given a stream is allocated and freed in the stream's order") {
  FakeRuntime::reset();
  FakeRuntime::FakeStream stream;
  {
    gpu::DeviceBuffer<float, FakeRuntime> a(10, &stream);
    gpu::DeviceBuffer<float, FakeRuntime> b(std::move(a));
    gpu::DeviceBuffer<float, FakeRuntime> plain(2);
    plain = std::move(b); // plain's memory goes to b, freed plainly; a's in the stream's order
  }
  CHECK(FakeRuntime::log == Log{"malloc_async 40", "malloc 8", "free_async", "free"});
}

TEST_CASE("a failed allocation throws with gpu.hpp's line and the runtime's error") {
  FakeRuntime::reset();
  FakeRuntime::malloc_status = FakeRuntime::bad;
  try {
    gpu::DeviceBuffer<float, FakeRuntime> a(4);
    FAIL("no error");
  } catch (const Error &e) {
    std::string what = e.what();
    CHECK(what.find("kopt/harness/gpu.hpp:") != std::string::npos);
    CHECK(what.find(": R::malloc(") != std::string::npos);
    std::string end = ": fakeErrorBad: out of fake memory";
    CHECK(what.size() > end.size());
    CHECK(what.substr(what.size() - end.size()) == end);
  }
  CHECK(FakeRuntime::log == Log{"malloc 16"});
}

TEST_CASE("the event timer flushes max(2 x L2, 64 MiB), times between events, returns us; only "
          "the timed run lies between profiler start and stop") {
  FakeRuntime::reset();
  SUBCASE("a small L2 flushes 64 MiB") {
    FakeRuntime::l2_bytes = 4 << 20;
    gpu::EventTimer<FakeRuntime> timer(nullptr);
    CHECK(FakeRuntime::log == Log{"l2 of device 3", "malloc 67108864", "memset 67108864 to 1"});
    CHECK(timer.device().arch == "fake_1"); // what the harness prints as kopt-device
    CHECK(timer.device().compute_units == 7);
  }
  SUBCASE("a large L2 flushes twice its size") {
    FakeRuntime::l2_bytes = 50 << 20;
    gpu::EventTimer<FakeRuntime> timer(nullptr);
    CHECK(FakeRuntime::log == Log{"l2 of device 3", "malloc 104857600", "memset 104857600 to 1"});
  }
  SUBCASE("every run reads the flush buffer (written once, at construction) before its start "
          "event: a read leaves L2 clean, a write would leave dirty lines the run pays for") {
    FakeRuntime::l2_bytes = 50 << 20;
    FakeRuntime::elapsed_ms = 1.5f;
    {
      gpu::EventTimer<FakeRuntime> timer(nullptr);
      CHECK(std::string(timer.name()) == "events");
      LoggingProblem problem;
      FakeRuntime::log.clear();
      CHECK(timer.time_run(problem) == 1500.0);
      timer.time_run(problem);
      CHECK(FakeRuntime::log == Log{"read 104857600", "profiler start", "event record", "run",
                                    "event record", "event synchronize", "profiler stop",
                                    "timed end", "sync", "read 104857600", "profiler start",
                                    "event record", "run", "event record", "event synchronize",
                                    "profiler stop", "timed end", "sync"});
      FakeRuntime::log.clear();
    }
    CHECK(FakeRuntime::log == Log{"event destroy", "event destroy", "free"});
  }
}

TEST_CASE("a device check compares the snapshot taken first, not the output as it is later, and "
          "copies back only the tally") {
  FakeRuntime::reset();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> output = {1, 2, nan, 4};
  const std::vector<float> reference = {1, 2, 3, 5};
  gpu::DeviceCheck<FakeRuntime> check(gpu::Dtype::fp32, output.size(), nullptr);
  CHECK(FakeRuntime::log == Log{"malloc_async 16", "malloc_async 32"}); // on its stream
  FakeRuntime::log.clear();
  check.snapshot(output.data());
  output[3] = 5; // work left running finishes the output after the snapshot
  const Comparison c = check.compare(reference.data(), Tolerance{});
  CHECK(FakeRuntime::log == Log{"copy 16 device to device", "memset 32 to 0", "compare 4",
                                "copy 32 to host", "stream synchronize"});
  CHECK(c.elements == 4);
  CHECK(c.mismatches == 2);
  CHECK(c.nans == 1);
  CHECK(c.max_abs == 1.0);
  CHECK(c.max_rel == 0.2);
  REQUIRE_THROWS_WITH(check.compare(reference.data(), Tolerance{}),
                      "DeviceCheck::compare: no snapshot of the output was taken first");
}

TEST_CASE("a device check's snapshot holds the output's elements at their own size") {
  FakeRuntime::reset();
  gpu::DeviceCheck<FakeRuntime> bf16(gpu::Dtype::bf16, 5, nullptr);
  gpu::DeviceCheck<FakeRuntime> fp16(gpu::Dtype::fp16, 3, nullptr);
  CHECK(FakeRuntime::log ==
        Log{"malloc_async 10", "malloc_async 32", "malloc_async 6", "malloc_async 32"});
}

TEST_SUITE_END();
