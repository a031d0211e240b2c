// kopt shape capture: the C++17 piece gen-instances emits beside the dispatch as kopt_capture.h.
// Switched on by KOPT_CAPTURE=<file>; records each distinct dispatch shape with its call count
// (at most KOPT_CAPTURE_MAX shapes, default 4096; calls of further shapes are counted as
// overflow) and writes the file at exit, atomically (temp file + rename). Off, a dispatch pays
// one load of a pointer made at static initialisation and a branch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace kopt_capture {

// One process's record of the shapes a dispatch was called with.
class ShapeCapture {
public:
  // Records into `path` the shapes of `dims` columns named `columns`, at most `max_shapes`.
  ShapeCapture(std::string path, std::string family, std::vector<std::string> columns,
               std::size_t max_shapes)
      : path_(std::move(path)), family_(std::move(family)), columns_(std::move(columns)),
        max_shapes_(max_shapes) {}

  // Counts one call with `dims` (columns_.size() values); thread-safe.
  void record(const std::int64_t *dims) {
    std::vector<std::int64_t> shape(dims, dims + columns_.size());
    std::lock_guard<std::mutex> lock(mutex_);
    ++calls_;
    auto it = counts_.find(shape);
    if (it != counts_.end()) {
      ++it->second;
    } else if (counts_.size() < max_shapes_) {
      counts_.emplace(std::move(shape), 1);
    } else {
      ++overflow_;
    }
  }

  // Returns the file's text: a `#` line with the totals, the CSV header, one row per shape.
  std::string text() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out = "# kopt capture: family=" + family_ + " calls=" + std::to_string(calls_) +
                      " shapes=" + std::to_string(counts_.size()) +
                      " max=" + std::to_string(max_shapes_) +
                      " overflow=" + std::to_string(overflow_) + "\n";
    for (const auto &column : columns_) {
      out += column + ",";
    }
    out += "count\n";
    for (const auto &[shape, count] : counts_) {
      for (std::int64_t v : shape) {
        out += std::to_string(v) + ",";
      }
      out += std::to_string(count) + "\n";
    }
    return out;
  }

  // Writes the file through `<path>.<pid>.tmp` and a rename; returns false on failure.
  bool write() const {
    std::string body = text();
    std::string tmp = path_ + "." + std::to_string(static_cast<long>(::getpid())) + ".tmp";
    std::FILE *f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) {
      return false;
    }
    bool ok = std::fwrite(body.data(), 1, body.size(), f) == body.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) {
      std::remove(tmp.c_str());
      return false;
    }
    return true;
  }

  // Returns the number of calls of shapes that did not fit under the bound.
  std::uint64_t overflow() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return overflow_;
  }

private:
  std::string path_;
  std::string family_;
  std::vector<std::string> columns_;
  std::size_t max_shapes_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::int64_t>, std::uint64_t> counts_;
  std::uint64_t calls_ = 0;
  std::uint64_t overflow_ = 0;
};

// Returns KOPT_CAPTURE_MAX when it is a positive number, else 4096.
inline std::size_t max_shapes_from_env() {
  const char *text = std::getenv("KOPT_CAPTURE_MAX");
  if (text == nullptr) {
    return 4096;
  }
  char *end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || value == 0) {
    std::fprintf(stderr, "kopt: KOPT_CAPTURE_MAX='%s' is not a positive number, using 4096\n",
                 text);
    return 4096;
  }
  return static_cast<std::size_t>(value);
}

// The process's capture, made on first use from KOPT_CAPTURE; nullptr when it is unset. It is
// never destroyed, so that the atexit writer (and late dispatches) never see a dead object.
inline ShapeCapture *process_capture(const char *family, const char *const *columns,
                                     std::size_t dims) {
  const char *path = std::getenv("KOPT_CAPTURE");
  if (path == nullptr || *path == '\0') {
    return nullptr;
  }
  static ShapeCapture *capture = new ShapeCapture(
      path, family, std::vector<std::string>(columns, columns + dims), max_shapes_from_env());
  std::atexit([] {
    if (!capture->write()) {
      std::fprintf(stderr, "kopt: could not write the shape capture file\n");
    }
  });
  return capture;
}

} // namespace kopt_capture
