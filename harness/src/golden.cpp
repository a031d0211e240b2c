#include "kopt/harness/golden.hpp"

#include "kopt/harness/atomic_file.hpp"
#include "kopt/harness/error.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// Reads every entry, or with `keys` only theirs; see the two read_golden in golden.hpp.
Golden read_entries(const std::string &path, const std::set<std::string> *keys) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(path + ": cannot open the golden file");
  }
  std::string line;
  if (!std::getline(in, line) || line != magic) {
    throw Error(path + ": not a kopt golden file (expected first line '" + std::string(magic) +
                "')");
  }
  Golden golden;
  golden.set_source(path);
  std::size_t entries = read_count(in, path, "the number of configs");
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  std::set<std::string> skipped;
  for (std::size_t e = 0; e < entries; ++e) {
    std::string key;
    if (!std::getline(in, key)) {
      throw Error(path + ": truncated golden: expected " + std::to_string(entries) +
                  " configs, found " + std::to_string(e));
    }
    std::size_t count = read_count(in, path, "the element count of config " + key);
    if (keys && !keys->count(key)) {
      if (!skipped.insert(key).second) {
        throw Error(path + ": golden already holds config " + key);
      }
      in.seekg(static_cast<std::streamoff>(count * 4), std::ios::cur);
      if (!in || (!ec && static_cast<std::uintmax_t>(in.tellg()) > file_size)) {
        throw Error(path + ": truncated golden: config " + key + " should hold " +
                    std::to_string(count) + " elements");
      }
      continue;
    }
    if (!ec && count > file_size / 4) { // before allocating what no file this size holds
      throw Error(path + ": truncated golden: config " + key + " should hold " +
                  std::to_string(count) + " elements");
    }
    // Read straight into the floats, then put each in host order: nothing to do on a
    // little-endian host (a 1.3 GB golden is read in about a second, not several).
    std::vector<float> values(count);
    if (!in.read(reinterpret_cast<char *>(values.data()),
                 static_cast<std::streamsize>(count * 4))) {
      throw Error(path + ": truncated golden: config " + key + " should hold " +
                  std::to_string(count) + " elements");
    }
    if (!little_endian()) {
      for (float &value : values) {
        value = get_float(reinterpret_cast<const char *>(&value));
      }
    }
    try {
      golden.add(key, std::move(values));
    } catch (const Error &error) {
      throw Error(path + ": " + error.what());
    }
  }
  return golden;
}

} // namespace

Golden read_golden(const std::string &path) { return read_entries(path, nullptr); }

Golden read_golden(const std::string &path, const std::set<std::string> &keys) {
  return read_entries(path, &keys);
}

const std::vector<float> &golden_output(const Golden &golden, const Config &config,
                                        std::size_t elements) {
  const std::string name = golden.source().empty() ? "golden" : golden.source();
  const std::vector<float> *values = golden.find(config.key());
  if (!values) {
    std::string first = golden.keys().empty() ? "none" : golden.keys().front();
    throw Error(name + ": no output for config " + config.key() + " (" + config.where() +
                "); the golden was written for other configs (first: " + first + ")");
  }
  if (values->size() != elements) {
    throw Error(name + ": config " + config.key() + " (" + config.where() + ") holds " +
                std::to_string(values->size()) + " elements, the output has " +
                std::to_string(elements));
  }
  return *values;
}

} // namespace kopt::harness
