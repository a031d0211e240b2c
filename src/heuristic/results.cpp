#include "heuristic/results.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

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

Results parse_results(const util::CsvTable &table, double ties) {
  Results r;
  r.source = table.source;
  size_t kernel = static_cast<size_t>(table.column("kernel"));
  size_t us = static_cast<size_t>(table.column("us"));
  size_t err = static_cast<size_t>(table.column("err"));
  if (kernel == 0) {
    throw Error(table.source + ": expected config columns before 'kernel'");
  }
  r.columns.assign(table.header.begin(), table.header.begin() + kernel);
  std::map<std::vector<int64_t>, Shape> shapes;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto &fields = table.rows[i];
    std::string where = table.where(i);
    std::vector<int64_t> dims;
    for (size_t c = 0; c < kernel; ++c) {
      dims.push_back(util::parse_int(fields[c], where + ": " + r.columns[c]));
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

Results read_results(const std::filesystem::path &file, double ties) {
  return parse_results(util::read_csv(file), ties);
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
  std::vector<std::string> parts;
  for (size_t c = 0; c < r.columns.size(); ++c) {
    if (r.columns[c] != "M") {
      parts.push_back(r.columns[c] + "=" + std::to_string(s.dims[c]));
    }
  }
  return util::join(parts, ",");
}

Results select_groups(const Results &r, const std::vector<std::string> &groups, bool keep) {
  Results out;
  out.source = r.source;
  out.columns = r.columns;
  out.ties = r.ties;
  for (const auto &s : r.shapes) {
    bool in = std::find(groups.begin(), groups.end(), group_of(r, s)) != groups.end();
    if (in == keep) {
      out.shapes.push_back(s);
    }
  }
  return out;
}

} // namespace kopt::heuristic
