#include "capture/capture.hpp"

#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <map>

namespace kopt::capture {

namespace {

// Returns the value of `key=` in the `#` line, or "".
std::string header_value(std::string_view line, std::string_view key) {
  std::string needle = " " + std::string(key) + "=";
  size_t at = line.find(needle);
  if (at == std::string_view::npos) {
    return "";
  }
  size_t start = at + needle.size();
  size_t end = line.find(' ', start);
  return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
}

} // namespace

CaptureFile parse_capture(std::string_view text, const std::string &source) {
  CaptureFile file;
  file.source = source;
  // The `#` line comes first; the CSV starts on line 2 then, so row lines are shifted by one.
  int offset = 0;
  if (text.starts_with("#")) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.starts_with("# kopt capture:")) {
      throw Error(source + ":1: expected '# kopt capture: ...', got '" + std::string(line) + "'");
    }
    file.family = header_value(line, "family");
    std::string overflow = header_value(line, "overflow");
    if (!overflow.empty()) {
      file.overflow =
          static_cast<std::uint64_t>(util::parse_int(overflow, source + ":1: overflow"));
    }
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    offset = 1;
  }
  util::CsvTable table = util::parse_csv(text, source);
  if (table.header.empty()) {
    throw Error(source + ":" + std::to_string(offset + 1) +
                ": no CSV header (expected the "
                "dispatch columns and count)");
  }
  size_t count_column = static_cast<size_t>(table.column("count"));
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (i != count_column) {
      file.columns.push_back(table.header[i]);
    }
  }
  for (size_t r = 0; r < table.rows.size(); ++r) {
    std::string where = source + ":" + std::to_string(table.lines[r] + offset) + ": ";
    ShapeCount shape;
    for (size_t i = 0; i < table.header.size(); ++i) {
      std::int64_t value = util::parse_int(table.rows[r][i], where + table.header[i]);
      if (i == count_column) {
        if (value < 1) {
          throw Error(where + "count: must be at least 1, got " + table.rows[r][i]);
        }
        shape.count = static_cast<std::uint64_t>(value);
      } else {
        shape.values.push_back(value);
      }
    }
    file.shapes.push_back(std::move(shape));
  }
  return file;
}

CaptureFile read_capture(const std::filesystem::path &path) {
  return parse_capture(util::read_file(path, util::Input::table), path.string());
}

MergedCapture merge_captures(const std::vector<CaptureFile> &files,
                             const std::vector<std::string> &dispatch_columns,
                             const std::string &family) {
  MergedCapture merged;
  merged.columns = dispatch_columns;
  std::map<std::vector<std::int64_t>, std::uint64_t> counts;
  for (const CaptureFile &file : files) {
    if (!family.empty() && !file.family.empty() && file.family != family) {
      throw Error(file.source + ":1: family: the capture is of family '" + file.family +
                  "', not '" + family + "'");
    }
    std::vector<std::string> sorted_file = file.columns;
    std::vector<std::string> sorted_family = dispatch_columns;
    std::sort(sorted_file.begin(), sorted_file.end());
    std::sort(sorted_family.begin(), sorted_family.end());
    if (sorted_file != sorted_family) {
      throw Error(file.source + ":1: columns: expected the dispatch columns " +
                  util::join(dispatch_columns, ",") + " and count, got " +
                  util::join(file.columns, ","));
    }
    // Where each family column sits in this file.
    std::vector<size_t> at;
    for (const auto &column : dispatch_columns) {
      at.push_back(static_cast<size_t>(std::find(file.columns.begin(), file.columns.end(), column) -
                                       file.columns.begin()));
    }
    for (const ShapeCount &shape : file.shapes) {
      std::vector<std::int64_t> values;
      for (size_t i : at) {
        values.push_back(shape.values[i]);
      }
      counts[values] += shape.count;
      merged.calls += shape.count;
    }
    merged.overflow += file.overflow;
  }
  for (auto &[values, count] : counts) {
    merged.shapes.push_back({values, count});
  }
  return merged;
}

std::string configs_csv(const MergedCapture &merged) {
  std::vector<std::string> header = merged.columns;
  header.push_back("count");
  std::string out = util::csv_line(header) + "\n";
  for (const ShapeCount &shape : merged.shapes) {
    std::vector<std::string> fields;
    for (std::int64_t v : shape.values) {
      fields.push_back(std::to_string(v));
    }
    fields.push_back(std::to_string(shape.count));
    out += util::csv_line(fields) + "\n";
  }
  return out;
}

} // namespace kopt::capture
