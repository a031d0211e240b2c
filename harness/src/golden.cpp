#include "kopt/harness/golden.hpp"

#include "kopt/harness/atomic_file.hpp"
#include "kopt/harness/error.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace kopt::harness {

namespace {

constexpr const char *magic = "kopt-golden 1";

void put_float(std::string &out, float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int shift = 0; shift < 32; shift += 8) {
    out += static_cast<char>((bits >> shift) & 0xff);
  }
}

bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

float get_float(const char *in) {
  std::uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) {
    bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Reads a decimal count on its own line; throws naming the file and what was expected.
std::size_t read_count(std::istream &in, const std::string &path, const std::string &what) {
  std::string line;
  if (!std::getline(in, line)) {
    throw Error(path + ": truncated golden: expected " + what);
  }
  char *end = nullptr;
  unsigned long long value = std::strtoull(line.c_str(), &end, 10);
  if (line.empty() || *end != '\0') {
    throw Error(path + ": expected " + what + ", got '" + line + "'");
  }
  return static_cast<std::size_t>(value);
}

} // namespace

void Golden::add(const std::string &key, std::vector<float> output) {
  if (key.find('\n') != std::string::npos) {
    throw Error("golden key holds a newline: " + key);
  }
  if (!outputs_.emplace(key, std::move(output)).second) {
    throw Error("golden already holds config " + key);
  }
  keys_.push_back(key);
}

const std::vector<float> *Golden::find(const std::string &key) const {
  auto it = outputs_.find(key);
  return it == outputs_.end() ? nullptr : &it->second;
}

void write_golden(const std::string &path, const Golden &golden) {
  std::string out = std::string(magic) + "\n" + std::to_string(golden.keys().size()) + "\n";
  for (const auto &key : golden.keys()) {
    const auto &values = *golden.find(key);
    out += key + "\n" + std::to_string(values.size()) + "\n";
    for (float value : values) {
      put_float(out, value);
    }
  }
  write_file_atomic(path, out);
}

namespace {

// One entry of a golden file: its key, element count and where its values start.
struct Entry {
  std::string key;
  std::size_t count = 0;
  std::streamoff offset = 0;
};

std::string truncated(const std::string &path, const Entry &entry) {
  return path + ": truncated golden: config " + entry.key + " should hold " +
         std::to_string(entry.count) + " elements";
}

// Reads a golden's entries without their values (seeking past them), checking the whole file:
// its first line, every count, a key given twice and values running past its end. Keeps every
// entry, or with `keys` only theirs, in the file's order.
std::vector<Entry> index_entries(const std::string &path, const std::set<std::string> *keys) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(path + ": cannot open the golden file");
  }
  std::string line;
  if (!std::getline(in, line) || line != magic) {
    throw Error(path + ": not a kopt golden file (expected first line '" + std::string(magic) +
                "')");
  }
  std::size_t entries = read_count(in, path, "the number of configs");
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  std::set<std::string> seen;
  std::vector<Entry> index;
  for (std::size_t e = 0; e < entries; ++e) {
    Entry entry;
    if (!std::getline(in, entry.key)) {
      throw Error(path + ": truncated golden: expected " + std::to_string(entries) +
                  " configs, found " + std::to_string(e));
    }
    entry.count = read_count(in, path, "the element count of config " + entry.key);
    if (!seen.insert(entry.key).second) {
      throw Error(path + ": golden already holds config " + entry.key);
    }
    entry.offset = in.tellg();
    if (!ec && entry.count > file_size / 4) { // before the sum below can overflow
      throw Error(truncated(path, entry));
    }
    in.seekg(static_cast<std::streamoff>(entry.count * 4), std::ios::cur);
    if (!in || (!ec && static_cast<std::uintmax_t>(in.tellg()) > file_size)) {
      throw Error(truncated(path, entry));
    }
    if (!keys || keys->count(entry.key)) {
      index.push_back(std::move(entry));
    }
  }
  return index;
}

// Reads one entry's values from `in`, put in host order.
std::vector<float> read_values(std::ifstream &in, const std::string &path, const Entry &entry) {
  // Straight into the floats, then each put in host order: nothing to do on a little-endian
  // host (a 1.3 GB golden is read in about a second, not several).
  std::vector<float> values(entry.count);
  in.seekg(entry.offset);
  if (!in.read(reinterpret_cast<char *>(values.data()),
               static_cast<std::streamsize>(entry.count * 4))) {
    throw Error(truncated(path, entry));
  }
  if (!little_endian()) {
    for (float &value : values) {
      value = get_float(reinterpret_cast<const char *>(&value));
    }
  }
  return values;
}

Golden read_entries(const std::string &path, const std::set<std::string> *keys) {
  std::vector<Entry> index = index_entries(path, keys);
  std::ifstream in(path, std::ios::binary);
  Golden golden;
  golden.set_source(path);
  for (const auto &entry : index) {
    std::vector<float> values = read_values(in, path, entry); // its errors name the path
    try {
      golden.add(entry.key, std::move(values));
    } catch (const Error &error) {
      throw Error(path + ": " + error.what());
    }
  }
  return golden;
}

std::string no_output(const std::string &name, const Config &config, const std::string &first) {
  return name + ": no output for config " + config.key() + " (" + config.where() +
         "); the golden was written for other configs (first: " + first + ")";
}

} // namespace

Golden read_golden(const std::string &path) { return read_entries(path, nullptr); }

Golden read_golden(const std::string &path, const std::set<std::string> &keys) {
  return read_entries(path, &keys);
}

struct GoldenPrefetch::Shared {
  std::string path;
  std::vector<Entry> order;               // the configs' entries, in run order
  std::vector<std::vector<float>> values; // order's values, filled by the reader
  std::size_t ready = 0;                  // how many of `order` the reader has read
  std::exception_ptr error;               // what stopped the reader
  bool stop = false;
  std::mutex mutex;
  std::condition_variable changed;
};

GoldenPrefetch::GoldenPrefetch(const std::string &path, const std::vector<Config> &configs)
    : shared_(std::make_shared<Shared>()) {
  std::vector<Entry> index = index_entries(path, nullptr);
  shared_->path = path;
  for (const auto &config : configs) {
    auto at = std::find_if(index.begin(), index.end(),
                           [&](const Entry &e) { return e.key == config.key(); });
    if (at == index.end()) {
      throw Error(no_output(path, config, index.empty() ? "none" : index.front().key));
    }
    shared_->order.push_back(*at);
  }
  shared_->values.resize(shared_->order.size());
  reader_ = std::thread([shared = shared_] {
    try {
      std::ifstream in(shared->path, std::ios::binary);
      for (std::size_t i = 0; i < shared->order.size(); ++i) {
        std::vector<float> values = read_values(in, shared->path, shared->order[i]);
        std::lock_guard lock(shared->mutex);
        if (shared->stop) {
          return;
        }
        shared->values[i] = std::move(values);
        shared->ready = i + 1;
        shared->changed.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(shared->mutex);
      shared->error = std::current_exception();
      shared->changed.notify_all();
    }
  });
}

GoldenPrefetch::~GoldenPrefetch() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stop = true;
  }
  if (reader_.joinable()) {
    reader_.join();
  }
}

void GoldenPrefetch::wait_all() {
  if (reader_.joinable()) {
    reader_.join();
  }
  std::lock_guard lock(shared_->mutex);
  if (shared_->error) {
    std::rethrow_exception(shared_->error);
  }
}

Golden GoldenPrefetch::take(const Config &config) {
  std::size_t i = 0;
  while (i < shared_->order.size() && shared_->order[i].key != config.key()) {
    ++i;
  }
  if (i == shared_->order.size()) {
    throw Error("internal: config " + config.key() + " was not given to the golden's reader");
  }
  std::unique_lock lock(shared_->mutex);
  shared_->changed.wait(lock, [&] { return shared_->ready > i || shared_->error; });
  if (shared_->ready <= i) {
    std::rethrow_exception(shared_->error);
  }
  Golden golden;
  golden.set_source(shared_->path);
  golden.add(config.key(), std::move(shared_->values[i]));
  return golden;
}

const std::vector<float> &golden_output(const Golden &golden, const Config &config,
                                        std::size_t elements) {
  const std::string name = golden.source().empty() ? "golden" : golden.source();
  const std::vector<float> *values = golden.find(config.key());
  if (!values) {
    throw Error(no_output(name, config, golden.keys().empty() ? "none" : golden.keys().front()));
  }
  if (values->size() != elements) {
    throw Error(name + ": config " + config.key() + " (" + config.where() + ") holds " +
                std::to_string(values->size()) + " elements, the output has " +
                std::to_string(elements));
  }
  return *values;
}

} // namespace kopt::harness
