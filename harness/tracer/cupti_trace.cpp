// kopt's CUPTI tracer: a library the CUDA driver loads into a harness process when kopt sets
// CUDA_INJECTION64_PATH to it (and KOPT_CUPTI_TRACE to the trace file to write). It times every
// kernel, copy and set that an API call made inside a timed range launched, from CUPTI's activity
// records: the GPU's own start and end of each, with no replay and no serialisation, so the
// harness runs at full speed.
//
// A timed range is what the harness's event timer marks with the profiler start and stop
// (cudaProfilerStart / cudaProfilerStop, gpu::EventTimer), one per timed run, the marks ncu's
// --profile-from-start off obeys too. Every runtime or driver API call made while a range is open,
// from any thread, is the range's: the kernels, copies and sets it launched count toward that
// run, whatever their name and stream (the rule of the keep test: every kernel in the range
// counts). A start inside an open range or a stop outside one is not the harness's timer (it marks
// each run once): the trace names it, and kopt refuses the trace.
//
// Work launched outside every range must not run during one: the trace holds each range's span on
// the GPU's clock (CUPTI's timestamp at its start and stop) and the stream of the timer's first
// event record in it, and every kernel, copy and set launched outside the ranges that ran during
// some range's span; kopt refuses the trace when one did (profile/cupti_trace.hpp). A kernel
// launched outside the ranges that is still running when a range ends (its stream, whose last
// launch came before the range, still busy) would keep the harness waiting, maybe for ever: the
// tracer writes the trace at once, naming it, and ends the process (exit status 3).
//
// The trace (profile/cupti_trace.hpp reads it) is written once, at exit, to KOPT_CUPTI_TRACE
// through a temp file renamed into place, and ends with "# end": a process that never reached its
// exit handlers (killed, crashed, _Exit) leaves no trace, which kopt reports instead of a time.
//
// C++17, like harness code: it runs inside the harness process.

#include "api_streams.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

// One kernel, copy or set: launched in a timed range, or launched outside every range and run
// during one.
struct Activity {
  int range = -1;              // -1: launched outside every range
  const char *kind = "kernel"; // "kernel", "memcpy" or "memset"
  std::string name;            // the kernel's mangled name, or the copy's direction
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;
};

// A timed range on the GPU's clock (CUPTI's timestamps, which its activity records use too): at
// its profiler start and stop (0 while open), and the stream of the harness timer's first event
// record in it (-1 before one).
struct Span {
  uint64_t start = 0;
  uint64_t stop = 0;
  int64_t stream = -1;
};

// The last kernel or graph launched on a stream.
struct Launch {
  std::string name;      // the kernel's mangled name, or "a CUDA graph"
  int ranges = 0;        // ranges opened before its launch
  bool in_range = false; // launched inside a timed range
};

// Everything the callbacks share; CUPTI calls them from the harness's threads and its own.
struct State {
  std::mutex mutex;
  std::string path;                              // the trace file (KOPT_CUPTI_TRACE)
  bool open = false;                             // a timed range is open
  int ranges = 0;                                // ranges opened so far; the open one is ranges - 1
  uint64_t calls = 0;                            // API calls made inside ranges
  std::unordered_map<uint32_t, int> range_of;    // correlation id of such a call -> its range
  std::vector<Span> spans;                       // one per range opened
  std::unordered_map<CUstream, Launch> launches; // each stream's last launch
  std::vector<Activity> activities;
  std::vector<std::string> anomalies;
  std::vector<std::string> running; // "<range> <kernel>": launched outside, running at its end
  uint64_t dropped = 0;
  std::string error; // the first CUPTI call that failed
};

// Never destroyed: the exit handler that writes the trace may run after static destructors.
State &state() {
  static State *s = new State;
  return *s;
}

// Keeps the first failed CUPTI call in `s` (its mutex held).
void note_error_locked(State &s, CUptiResult result, const char *what) {
  if (result == CUPTI_SUCCESS || !s.error.empty()) {
    return;
  }
  const char *text = nullptr;
  cuptiGetResultString(result, &text);
  s.error = std::string(what) + ": " + (text ? text : "unknown CUPTI error");
}

void note_error(CUptiResult result, const char *what) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  note_error_locked(s, result, what);
}

std::string demangled(const std::string &name) {
  int status = 0;
  char *text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) {
    return name;
  }
  std::string result(text);
  std::free(text);
  return result;
}

// A profiler start or stop is made once by the runtime call and once by the driver call the
// runtime makes for it; only the outermost counts.
thread_local int runtime_profiler_call = 0;
// The range that the outermost profiler stop in progress on this thread closed, or -1.
thread_local int closing_range = -1;

// Opens or closes a range at a profiler start or stop; returns the range a stop closed, or -1.
int on_profiler(bool start) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  uint64_t now = 0;
  note_error_locked(s, cuptiGetTimestamp(&now), "cuptiGetTimestamp");
  if (start && s.open) {
    s.anomalies.push_back("a profiler start inside timed range " + std::to_string(s.ranges - 1));
  } else if (!start && !s.open) {
    s.anomalies.push_back(s.ranges == 0
                              ? std::string("a profiler stop before the first timed range")
                              : "a profiler stop outside any timed range (after range " +
                                    std::to_string(s.ranges - 1) + ")");
  } else if (start) {
    s.open = true;
    ++s.ranges;
    s.spans.push_back({now, 0, -1});
  } else {
    s.open = false;
    s.spans.back().stop = now;
    return s.ranges - 1;
  }
  return -1;
}

void write_trace(bool flush);

// When timed range r has ended (the timer waited for its stop event): a stream whose last launch
// came outside the ranges, before r began, and that is still busy, holds work launched outside
// the ranges that ran through r. The harness would wait for it, maybe for ever: the trace is
// written now, naming the kernel, and the process ends.
void check_streams(int r) {
  State &s = state();
  std::vector<std::pair<CUstream, std::string>> suspects;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto &[stream, launch] : s.launches) {
      if (!launch.in_range && launch.ranges <= r) {
        suspects.emplace_back(stream, demangled(launch.name));
      }
    }
  }
  std::vector<std::string> running;
  for (const auto &[stream, name] : suspects) {
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    // A stream being captured runs nothing, and a query would end its capture.
    if (cuStreamIsCapturing(stream, &capture) == CUDA_SUCCESS &&
        capture == CU_STREAM_CAPTURE_STATUS_NONE && cuStreamQuery(stream) == CUDA_ERROR_NOT_READY) {
      running.push_back(name);
    }
  }
  if (running.empty()) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const std::string &name : running) {
      s.running.push_back(std::to_string(r) + " " + name);
    }
  }
  std::fprintf(stderr,
               "kopt cupti tracer: %s was launched outside the timed ranges and was still running "
               "when timed range %d ended: refused, the harness ends here\n",
               running.front().c_str(), r);
  write_trace(false);
  _exit(3);
}

// A profiler start or stop: the outermost call's enter opens or closes the range, its exit (a
// stop's) checks the streams.
void on_profiler_call(bool runtime, bool start, bool enter) {
  if (enter) {
    if (runtime || runtime_profiler_call == 0) {
      int closed = on_profiler(start);
      closing_range = start ? -1 : closed;
    }
    runtime_profiler_call += runtime ? 1 : 0;
    return;
  }
  if (runtime) {
    --runtime_profiler_call;
  }
  if (runtime_profiler_call == 0 && !start && closing_range >= 0) {
    int closed = closing_range;
    closing_range = -1;
    check_streams(closed);
  }
}

void CUPTIAPI on_api(void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data) {
  const auto *info = static_cast<const CUpti_CallbackData *>(data);
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  bool start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                       : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
  bool stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                      : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  if (start || stop) {
    on_profiler_call(runtime, start, info->callbackSite == CUPTI_API_ENTER);
    return;
  }
  if (info->callbackSite != CUPTI_API_ENTER) {
    return;
  }
  using kopt_tracer::StreamUse;
  CUstream stream = nullptr;
  StreamUse use = kopt_tracer::stream_use(domain, cbid, info->functionParams, &stream);
  uint32_t stream_id = 0;
  bool event_stream = use == StreamUse::event_record &&
                      cuptiGetStreamIdEx(info->context, stream, 0, &stream_id) == CUPTI_SUCCESS;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.open) {
    s.range_of[info->correlationId] = s.ranges - 1;
    ++s.calls;
    if (event_stream && s.spans.back().stream < 0) {
      s.spans.back().stream = stream_id;
    }
  }
  if (use == StreamUse::kernel || use == StreamUse::graph) {
    const char *name = use == StreamUse::graph ? "a CUDA graph" : info->symbolName;
    s.launches[stream] = {name ? name : "?", s.ranges, s.open};
  } else if (use == StreamUse::destroy) {
    s.launches.erase(stream);
  }
}

// Whether [start, end] meets a range's span (an open range's reaches to now). The spans follow
// each other in time: of those that began before `end`, the last reaches furthest.
bool meets_a_range(const State &s, uint64_t start, uint64_t end) {
  auto after = std::partition_point(s.spans.begin(), s.spans.end(),
                                    [&](const Span &span) { return span.start < end; });
  if (after == s.spans.begin()) {
    return false;
  }
  const Span &last = *std::prev(after);
  return last.stop == 0 || last.stop > start;
}

constexpr size_t buffer_bytes = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;
}

const char *copy_kind(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "memcpy HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "memcpy DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "memcpy DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "memcpy PtoP";
  default:
    return "memcpy";
  }
}

// Keeps the records of launches made inside a range (their API call was seen, at its enter,
// before the work it launched could complete), and of those made outside every range that ran
// during one (a record comes once its work has ended, when every range it met has begun).
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t,
                               size_t valid) {
  State &s = state();
  CUpti_Activity *record = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    CUptiResult next = CUPTI_SUCCESS;
    while ((next = cuptiActivityGetNextRecord(buffer, valid, &record)) == CUPTI_SUCCESS) {
      Activity a;
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
        a = {-1,     "kernel",    k->name ? k->name : "?", k->start,
             k->end, k->streamId, k->correlationId};
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const auto *c = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
        a = {-1, "memcpy", copy_kind(c->copyKind), c->start, c->end, c->streamId, c->correlationId};
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto *m = reinterpret_cast<const CUpti_ActivityMemset4 *>(record);
        a = {-1, "memset", "memset", m->start, m->end, m->streamId, m->correlationId};
      } else {
        continue;
      }
      auto it = s.range_of.find(a.correlation);
      if (it != s.range_of.end()) {
        a.range = it->second;
        s.activities.push_back(std::move(a));
      } else if (meets_a_range(s, a.start, a.end)) {
        s.activities.push_back(std::move(a));
      }
    }
    if (next != CUPTI_ERROR_MAX_LIMIT_REACHED) {
      // An incomplete record (work still running when the buffer was handed over, at exit) ends
      // the buffer: the records after it are lost.
      note_error_locked(s, next, "cuptiActivityGetNextRecord");
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) {
      s.dropped += dropped;
    }
  }
  std::free(buffer);
}

// A CSV field: quoted, with quotes doubled and line breaks made spaces.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') {
      out += "\"\"";
    } else {
      out += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return out + "\"";
}

// The trace's head: counts, errors, anomalies and kernels found running (the mutex held).
void write_head(std::FILE *file, const State &s) {
  std::fprintf(file, "# kopt cupti trace 2\n# ranges %d\n# calls %llu\n# dropped %llu\n", s.ranges,
               static_cast<unsigned long long>(s.calls),
               static_cast<unsigned long long>(s.dropped));
  if (!s.error.empty()) {
    std::fprintf(file, "# error %s\n", s.error.c_str());
  }
  for (const std::string &anomaly : s.anomalies) {
    std::fprintf(file, "# anomaly %s\n", anomaly.c_str());
  }
  for (const std::string &running : s.running) {
    std::fprintf(file, "# running %s\n", running.c_str());
  }
}

// The table: a "range" row per range (its span and the timer's stream), then the activities.
void write_rows(std::FILE *file, const State &s) {
  std::fprintf(file, "range,kind,start_ns,end_ns,stream,correlation,name\n");
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  for (size_t r = 0; r < s.spans.size(); ++r) {
    const Span &span = s.spans[r];
    std::string stream = span.stream < 0 ? "" : std::to_string(span.stream);
    std::fprintf(file, "%zu,range,%llu,%llu,%s,0,\"\"\n", r,
                 static_cast<unsigned long long>(span.start),
                 static_cast<unsigned long long>(span.stop == 0 ? now : span.stop), stream.c_str());
  }
  for (const Activity &a : s.activities) {
    std::string name = std::strcmp(a.kind, "kernel") == 0 ? demangled(a.name) : a.name;
    std::string range = a.range < 0 ? "-" : std::to_string(a.range);
    std::fprintf(file, "%s,%s,%llu,%llu,%u,%u,%s\n", range.c_str(), a.kind,
                 static_cast<unsigned long long>(a.start), static_cast<unsigned long long>(a.end),
                 a.stream, a.correlation, quoted(name).c_str());
  }
}

// Writes the trace; `flush` first hands over every record CUPTI still holds (at exit).
void write_trace(bool flush) {
  if (flush) {
    note_error(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.open) {
    s.anomalies.push_back("timed range " + std::to_string(s.ranges - 1) +
                          " was still open at exit");
  }
  std::string temp = s.path + ".tmp." + std::to_string(getpid());
  std::FILE *file = std::fopen(temp.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "kopt cupti tracer: cannot write %s: %s\n", temp.c_str(),
                 std::strerror(errno));
    return;
  }
  write_head(file, s);
  write_rows(file, s);
  std::fprintf(file, "# end\n");
  bool ok = std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), s.path.c_str()) != 0) {
    std::fprintf(stderr, "kopt cupti tracer: cannot write %s: %s\n", s.path.c_str(),
                 std::strerror(errno));
    std::remove(temp.c_str());
  }
}

void write_trace_at_exit() { write_trace(true); }

} // namespace

/// The CUDA driver calls this once, at cuInit, in a process started with CUDA_INJECTION64_PATH
/// naming this library. Returns 1 (the driver ignores the value).
extern "C" int InitializeInjection(void) {
  const char *path = std::getenv("KOPT_CUPTI_TRACE");
  if (path == nullptr || *path == '\0') {
    return 1; // loaded without a trace to write: trace nothing
  }
  state().path = path;
  note_error(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
             "cuptiActivityRegisterCallbacks");
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMSET}) {
    note_error(cuptiActivityEnable(kind), "cuptiActivityEnable");
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  note_error(cuptiSubscribe(&subscriber, on_api, nullptr), "cuptiSubscribe");
  if (subscriber != nullptr) {
    note_error(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
    note_error(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain");
  }
  std::atexit(write_trace_at_exit);
  return 1;
}
