#include "ledger/detail.hpp"

#include "buildinfo/build_flags.hpp"

namespace kopt::ledger {

namespace {

// "chrono on <CPU>, build 1f2e3d4c5b6a (-O3)": the build as source_of wrote it before kept rows
// had build fields.
RecordedBuild build_in_text(const std::string &measured_by) {
  const std::string marker = ", build ";
  size_t at = measured_by.rfind(marker);
  if (at == std::string::npos) {
    return {};
  }
  size_t start = at + marker.size();
  size_t open = measured_by.find(" (", start);
  size_t close = measured_by.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return {};
  }
  return {measured_by.substr(start, open - start), measured_by.substr(open + 2, close - open - 2)};
}

} // namespace

RecordedBuild recorded_build(const State &state) {
  for (auto row = state.kept.rbegin(); row != state.kept.rend(); ++row) {
    if (row->candidate != state.best) {
      continue;
    }
    if (!row->build.empty()) {
      return {row->build, buildinfo::BuildFlags{row->build_flags, row->build}.optimisation()};
    }
    return build_in_text(row->measured_by);
  }
  return {};
}

std::string other_build(const State &state, const profile::Measurement &m) {
  RecordedBuild best = recorded_build(state);
  if (best.hash.empty() || m.build.empty() || best.hash == m.build || m.candidate == state.best) {
    return "";
  }
  return "candidate " + m.candidate + " measured build " + m.build + " (" +
         buildinfo::BuildFlags{m.build_flags, m.build}.optimisation() + "); BEST " + state.best +
         " was recorded with build " + best.hash + " (" + best.optimisation + ")";
}

void set_measured(KeptRow &row, const profile::Measurement &m) {
  row.build = m.build;
  row.build_flags = m.build_flags;
  row.configs = static_cast<int>(m.configs.size());
  row.configs_hash = m.configs_hash;
}

void set_measured(KeptRow &row, const nlohmann::json &line) {
  row.build = detail::text_or(line, "build");
  row.build_flags = detail::text_or(line, "build_flags");
  row.configs_hash = detail::text_or(line, "configs_hash");
  auto configs = line.find("configs");
  row.configs = configs != line.end() && configs->is_number_integer() ? configs->get<int>() : 0;
}

} // namespace kopt::ledger
