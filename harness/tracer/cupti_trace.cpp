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
// The trace (profile/cupti_trace.hpp reads it) is written once, at exit, to KOPT_CUPTI_TRACE
// through a temp file renamed into place, and ends with "# end": a process that never reached its
// exit handlers (killed, crashed, _Exit) leaves no trace, which kopt reports instead of a time.
//
// C++17, like harness code: it runs inside the harness process.

#include <cupti.h>
#include <cxxabi.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

// One kernel, copy or set that a timed range launched.
struct Activity {
  int range = 0;
  const char *kind = "kernel"; // "kernel", "memcpy" or "memset"
  std::string name;            // the kernel's mangled name, or the copy's direction
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;
};

// Everything the callbacks share; CUPTI calls them from the harness's threads and its own.
struct State {
  std::mutex mutex;
  std::string path;                           // the trace file (KOPT_CUPTI_TRACE)
  bool open = false;                          // a timed range is open
  int ranges = 0;                             // ranges opened so far; the open one is ranges - 1
  uint64_t calls = 0;                         // API calls made inside ranges
  std::unordered_map<uint32_t, int> range_of; // correlation id of such a call -> its range
  std::vector<Activity> activities;
  std::vector<std::string> anomalies;
  uint64_t dropped = 0;
  std::string error; // the first CUPTI call that failed
};

// Never destroyed: the exit handler that writes the trace may run after static destructors.
State &state() {
  static State *s = new State;
  return *s;
}

void note_error(CUptiResult result, const char *what) {
  if (result == CUPTI_SUCCESS) {
    return;
  }
  const char *text = nullptr;
  cuptiGetResultString(result, &text);
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.error.empty()) {
    s.error = std::string(what) + ": " + (text ? text : "unknown CUPTI error");
  }
}

// A profiler start or stop is made once by the runtime call and once by the driver call the
// runtime makes for it; only the outermost counts.
thread_local int runtime_profiler_call = 0;

void on_profiler(bool start) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
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
  } else {
    s.open = false;
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
    if (info->callbackSite == CUPTI_API_ENTER) {
      if (runtime || runtime_profiler_call == 0) {
        on_profiler(start);
      }
      runtime_profiler_call += runtime ? 1 : 0;
    } else if (runtime) {
      --runtime_profiler_call;
    }
    return;
  }
  if (info->callbackSite != CUPTI_API_ENTER) {
    return;
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.open) {
    s.range_of[info->correlationId] = s.ranges - 1;
    ++s.calls;
  }
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

// Keeps the records of launches made inside a range: their API call was seen (at its enter)
// before the work it launched could complete.
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t,
                               size_t valid) {
  State &s = state();
  CUpti_Activity *record = nullptr;
  std::vector<Activity> kept;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      Activity a;
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
        a = {0, "kernel", k->name ? k->name : "?", k->start, k->end, k->streamId, k->correlationId};
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const auto *c = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
        a = {0, "memcpy", copy_kind(c->copyKind), c->start, c->end, c->streamId, c->correlationId};
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto *m = reinterpret_cast<const CUpti_ActivityMemset4 *>(record);
        a = {0, "memset", "memset", m->start, m->end, m->streamId, m->correlationId};
      } else {
        continue;
      }
      auto it = s.range_of.find(a.correlation);
      if (it != s.range_of.end()) {
        a.range = it->second;
        s.activities.push_back(std::move(a));
      }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) {
      s.dropped += dropped;
    }
  }
  std::free(buffer);
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

void write_trace() {
  note_error(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
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
  std::fprintf(file, "# kopt cupti trace 1\n# ranges %d\n# calls %llu\n# dropped %llu\n", s.ranges,
               static_cast<unsigned long long>(s.calls),
               static_cast<unsigned long long>(s.dropped));
  if (!s.error.empty()) {
    std::fprintf(file, "# error %s\n", s.error.c_str());
  }
  for (const std::string &anomaly : s.anomalies) {
    std::fprintf(file, "# anomaly %s\n", anomaly.c_str());
  }
  std::fprintf(file, "range,kind,start_ns,end_ns,stream,correlation,name\n");
  for (const Activity &a : s.activities) {
    std::string name = std::strcmp(a.kind, "kernel") == 0 ? demangled(a.name) : a.name;
    std::fprintf(file, "%d,%s,%llu,%llu,%u,%u,%s\n", a.range, a.kind,
                 static_cast<unsigned long long>(a.start), static_cast<unsigned long long>(a.end),
                 a.stream, a.correlation, quoted(name).c_str());
  }
  std::fprintf(file, "# end\n");
  bool ok = std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), s.path.c_str()) != 0) {
    std::fprintf(stderr, "kopt cupti tracer: cannot write %s: %s\n", s.path.c_str(),
                 std::strerror(errno));
    std::remove(temp.c_str());
  }
}

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
  std::atexit(write_trace);
  return 1;
}
