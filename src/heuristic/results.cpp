#include "heuristic/results.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace kopt::heuristic {

std::string Shape::best() const {
  std::string name;
  double us = 0;
  for (const auto &[kernel, timing] : kernels) {
    if (timing.usable() && (name.empty() || timing.us < us)) {
      name = kernel;
      us = timing.us;
    }
  }
  return name;
}

void resolve_ties(Results &r, double ties) {
  if (!(ties >= 0) || !std::isfinite(ties)) {
    throw Error("--ties: expected a relative slack >= 0 (0.01 is 1%), got " +
                util::format_number(ties));
  }
  r.ties = ties;
  for (auto &s : r.shapes) {
    s.tuned = s.best();
  }
  if (ties == 0) {
    return;
  }
  // The tied kernels of a shape whose raw fastest is s.tuned, by name.
  auto tied = [ties](const Shape &s) {
    std::vector<std::string> out;
    const double limit = s.kernels.at(s.tuned).us * (1 + ties);
    for (const auto &[kernel, timing] : s.kernels) {
      if (timing.usable() && timing.us <= limit) {
        out.push_back(kernel);
      }
    }
    return out;
  };
  // A kernel's rank is the number of shapes where it is within the ties, not where it is the
  // raw fastest: two near-equal kernels split raw wins by noise, and a swap of their win counts
  // between two measurements would flip every shape they tie on at once (measured: 85 of 144
  // shapes agreed between two passes ranked by raw wins, 143 ranked by shapes within the ties).
  std::map<std::string, size_t> within;
  for (const auto &s : r.shapes) {
    if (!s.tuned.empty()) {
      for (const auto &kernel : tied(s)) {
        ++within[kernel];
      }
    }
  }
  for (auto &s : r.shapes) {
    if (s.tuned.empty()) {
      continue;
    }
    std::string choice;
    for (const auto &kernel : tied(s)) { // by name: the first wins an equal count
      if (choice.empty() || within[kernel] > within[choice]) {
        choice = kernel;
      }
    }
    s.tuned = choice;
  }
}

std::vector<std::string> Results::kernels() const {
  std::set<std::string> names;
  for (const auto &s : shapes) {
    for (const auto &[kernel, timing] : s.kernels) {
      names.insert(kernel);
    }
  }
  return {names.begin(), names.end()};
}

int Results::column(const std::string &name) const {
  auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? -1 : static_cast<int>(it - columns.begin());
}

namespace {

// A shape column's value: features multiply and divide them, so a negative or huge value (a
// product past int64) is refused where it is read.
int64_t dimension(std::string_view text, const std::string &where) {
  int64_t value = util::parse_int(text, where);
  if (value < 0 || value > kMaxDimension) {
    throw Error(where + ": expected an integer from 0 to " + std::to_string(kMaxDimension) +
                ", got '" + std::string(text) + "'");
  }
  return value;
}

const std::vector<std::string> kAiterColumns = {"M", "N", "K"};

bool is_aiter_table(const util::CsvTable &table) {
  return table.find_column("kernel") < 0 && table.find_column("kernelName") >= 0;
}

// Whether config column `c` of `table` names rather than measures: no row holds a number there
// (a model's name). A column of numbers with a stray word stays a dimension, and the word, or a
// number that is no integer, is an error.
bool label_column(const util::CsvTable &table, size_t c) {
  return !table.rows.empty() &&
         std::none_of(table.rows.begin(), table.rows.end(), [&](const auto &fields) {
           try {
             util::parse_double(fields[c], "");
             return true;
           } catch (const Error &) {
             return false;
           }
         });
}

Results parse_full(const util::CsvTable &table, double ties) {
  Results r;
  r.source = table.source;
  size_t kernel = static_cast<size_t>(table.column("kernel"));
  size_t us = static_cast<size_t>(table.column("us"));
  size_t err = static_cast<size_t>(table.column("err"));
  if (kernel == 0) {
    throw Error(table.source + ": expected config columns before 'kernel'");
  }
  std::vector<size_t> dims_at; // the config columns that are dimensions, not labels
  for (size_t c = 0; c < kernel; ++c) {
    if (!label_column(table, c)) {
      dims_at.push_back(c);
      r.columns.push_back(table.header[c]);
    }
  }
  std::map<std::vector<int64_t>, Shape> shapes;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto &fields = table.rows[i];
    std::string where = table.where(i);
    std::vector<int64_t> dims;
    for (size_t c : dims_at) {
      dims.push_back(dimension(fields[c], where + ": " + table.header[c]));
    }
    std::string name(util::trim(fields[kernel]));
    if (name.empty()) {
      throw Error(where + ": kernel: expected a kernel name, got ''");
    }
    Timing t;
    t.us = util::parse_double(fields[us], where + ": us");
    if (!(t.us > 0)) {
      throw Error(where + ": us: expected a time > 0, got '" + fields[us] + "'");
    }
    if (!util::trim(fields[err]).empty()) {
      t.err = util::parse_double(fields[err], where + ": err");
    }
    t.line = table.lines[i];
    Shape &shape = shapes[dims];
    if (shape.dims.empty()) {
      shape.dims = dims;
      shape.line = table.lines[i];
    }
    auto [it, fresh] = shape.kernels.emplace(name, t);
    if (!fresh && t.us < it->second.us) {
      it->second = t;
    }
  }
  for (auto &[dims, shape] : shapes) {
    r.shapes.push_back(std::move(shape));
  }
  resolve_ties(r, ties);
  return r;
}

// The (gfx, cu_num) group of row `i`: "gfx942,304", or "304" in old tables without gfx.
std::string aiter_group(const util::CsvTable &table, size_t i, int gfx, size_t cu) {
  std::string cu_num =
      std::to_string(util::parse_int(table.rows[i][cu], table.where(i) + ": cu_num"));
  return gfx < 0 ? cu_num
                 : std::string(util::trim(table.rows[i][static_cast<size_t>(gfx)])) + "," + cu_num;
}

// The group to read: `wanted`, or the table's only one.
std::string choose_group(const util::CsvTable &table, int gfx, size_t cu,
                         const std::string &wanted) {
  std::map<std::string, size_t> rows;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    ++rows[aiter_group(table, i, gfx, cu)];
  }
  std::vector<std::string> listed;
  for (const auto &[group, count] : rows) {
    listed.push_back(group + " (" + std::to_string(count) + " rows)");
  }
  const std::string what = gfx < 0 ? "cu_num" : "(gfx, cu_num)";
  if (!wanted.empty()) {
    std::vector<std::string> parts;
    for (const auto &part : util::split(wanted, ',')) {
      parts.emplace_back(util::trim(part));
    }
    std::string group = util::join(parts, ",");
    if (!rows.count(group)) {
      throw Error("--group: '" + wanted + "' is not a " + what + " group of " + table.source +
                  " (groups: " + util::join(listed, "; ") + ")");
    }
    return group;
  }
  if (rows.size() > 1) {
    throw Error(table.source + ": rows of " + std::to_string(rows.size()) + " " + what +
                " groups, each its own heuristic: choose one with --group (groups: " +
                util::join(listed, "; ") + ")");
  }
  return rows.empty() ? "" : rows.begin()->first;
}

Results parse_winners(const util::CsvTable &table, const ReadOptions &options) {
  Results r;
  r.source = table.source;
  r.columns = kAiterColumns;
  r.winners_only = true;
  r.kernel_column = "kernelName";
  int gfx = table.find_column("gfx");
  if (gfx < 0) {
    gfx = table.find_column("arch");
  }
  const size_t cu = static_cast<size_t>(table.column("cu_num"));
  std::vector<size_t> dims_at;
  for (const auto &c : r.columns) {
    dims_at.push_back(static_cast<size_t>(table.column(c)));
  }
  const size_t us = static_cast<size_t>(table.column("us"));
  const size_t name = static_cast<size_t>(table.column("kernelName"));
  const bool split = options.label == KernelLabel::name_and_split_k;
  const size_t split_k = split ? static_cast<size_t>(table.column("splitK")) : 0;
  r.table_group = choose_group(table, gfx, cu, options.group);
  std::map<std::vector<int64_t>, Shape> shapes;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (aiter_group(table, i, gfx, cu) != r.table_group) {
      continue;
    }
    const auto &fields = table.rows[i];
    const std::string where = table.where(i);
    std::vector<int64_t> dims;
    for (size_t c = 0; c < dims_at.size(); ++c) {
      dims.push_back(dimension(fields[dims_at[c]], where + ": " + r.columns[c]));
    }
    std::string label(util::trim(fields[name]));
    if (label.empty()) {
      throw Error(where + ": kernelName: expected a kernel name, got ''");
    }
    if (split) {
      label += std::string(kSplitKLabel) +
               std::to_string(util::parse_int(fields[split_k], where + ": splitK"));
    }
    Timing t;
    t.us = util::parse_double(fields[us], where + ": us");
    if (!(t.us > 0)) {
      throw Error(where + ": us: expected a time > 0, got '" + fields[us] + "'");
    }
    t.line = table.lines[i];
    Shape &shape = shapes[dims];
    if (shape.dims.empty()) {
      shape.dims = dims;
      shape.line = t.line;
      shape.kernels.emplace(label, t);
      continue;
    }
    const auto &[kept, timing] = *shape.kernels.begin();
    if (kept != label) {
      throw Error(where + ": duplicate shape " + shape_label(r.columns, dims) +
                  " with another winner: '" + label + "' here, '" + kept + "' on line " +
                  std::to_string(timing.line) + " (a tuned table names one winner per shape)");
    }
    if (t.us < timing.us) {
      shape.kernels.begin()->second = t;
    }
  }
  for (auto &[dims, shape] : shapes) {
    r.shapes.push_back(std::move(shape));
  }
  resolve_ties(r, options.ties);
  return r;
}

} // namespace

Results parse_results(const util::CsvTable &table, const ReadOptions &options) {
  if (is_aiter_table(table)) {
    return parse_winners(table, options);
  }
  if (!options.group.empty()) {
    throw Error("--group: " + table.source +
                " is not an aiter tuned table (no kernelName column): it has no (gfx, cu_num) "
                "groups");
  }
  return parse_full(table, options.ties);
}

Results read_results(const std::filesystem::path &file, const ReadOptions &options) {
  return parse_results(util::read_csv(file), options);
}

std::vector<std::string> config_columns(const util::CsvTable &table) {
  if (is_aiter_table(table)) {
    return kAiterColumns;
  }
  const size_t kernel = static_cast<size_t>(table.column("kernel"));
  return {table.header.begin(), table.header.begin() + static_cast<std::ptrdiff_t>(kernel)};
}

std::string instance_of(const std::string &label) {
  return label.substr(0, label.find(kSplitKLabel));
}

void check_instances(const Results &r, const std::vector<std::string> &instances,
                     const std::string &family) {
  const Timing *first = nullptr;
  std::string name;
  for (const auto &s : r.shapes) {
    for (const auto &[kernel, timing] : s.kernels) {
      if (std::find(instances.begin(), instances.end(), instance_of(kernel)) == instances.end() &&
          (!first || timing.line < first->line)) {
        first = &timing;
        name = instance_of(kernel);
      }
    }
  }
  if (first) {
    throw Error(r.source + ":" + std::to_string(first->line) + ": " + r.kernel_column + ": '" +
                name + "' is not an instance of family '" + family + "'");
  }
}

std::string most_frequent(const Results &r) {
  std::map<std::string, size_t> counts;
  for (const auto &s : r.shapes) {
    if (!s.tuned.empty()) {
      ++counts[s.tuned];
    }
  }
  std::string best;
  for (const auto &[kernel, count] : counts) { // by name: the first wins an equal count
    if (best.empty() || count > counts[best]) {
      best = kernel;
    }
  }
  return best;
}

std::vector<std::string> group_columns(const Results &r) {
  std::vector<std::string> out;
  for (const auto &c : r.columns) {
    if (c != "M") {
      out.push_back(c);
    }
  }
  return out;
}

std::string group_of(const Results &r, const Shape &s) {
  std::vector<std::string> columns;
  std::vector<int64_t> dims;
  for (size_t c = 0; c < r.columns.size(); ++c) {
    if (r.columns[c] != "M") {
      columns.push_back(r.columns[c]);
      dims.push_back(s.dims[c]);
    }
  }
  return shape_label(columns, dims);
}

std::string shape_label(const std::vector<std::string> &columns, const std::vector<int64_t> &dims) {
  std::vector<std::string> values;
  for (int64_t d : dims) {
    values.push_back(std::to_string(d));
  }
  return harness::config_label(columns, values);
}

Results select_groups(const Results &r, const std::vector<std::string> &groups, bool keep) {
  Results out = r; // everything but the shapes, chosen below
  out.shapes.clear();
  for (const auto &s : r.shapes) {
    bool in = std::find(groups.begin(), groups.end(), group_of(r, s)) != groups.end();
    if (in == keep) {
      out.shapes.push_back(s);
    }
  }
  return out;
}

} // namespace kopt::heuristic
