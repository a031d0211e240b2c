#include "profile/freshness.hpp"

#include "buildinfo/build_flags.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

#include <filesystem>

namespace kopt::profile {

namespace {

// A file's content hash, "" when it is missing or cannot be read (a comparison then says it
// changed, and the command that needs the file names what is wrong with it).
std::string hash_or_empty(const std::filesystem::path &path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) {
    return "";
  }
  try {
    return util::hash_file(path);
  } catch (const Error &) {
    return "";
  }
}

// " (5 configs measured, 6 now)", or "" when the configs file cannot be read now.
std::string config_counts(const Measurement &m, const spec::Family &family) {
  try {
    size_t now = util::read_csv(family.configs).rows.size();
    return " (" + std::to_string(m.configs.size()) + " configs measured, " + std::to_string(now) +
           " now)";
  } catch (const Error &) {
    return "";
  }
}

} // namespace

MeasuredInputs current_inputs(const spec::Family &family, const spec::Layout &layout) {
  std::error_code ec;
  bool golden = std::filesystem::exists(layout.golden(), ec);
  return {hash_or_empty(family.configs), golden ? hash_or_empty(layout.golden_info()) : "",
          hash_or_empty(family.harness)};
}

void set_inputs(Measurement &m, const MeasuredInputs &inputs) {
  m.configs_hash = inputs.configs_hash;
  m.golden = inputs.golden;
  m.harness_source = inputs.harness_source;
}

std::string changed_since(const Measurement &m, const spec::Family &family,
                          const spec::Layout &layout) {
  MeasuredInputs now = current_inputs(family, layout);
  const std::string since = " since the measurement";
  if (!m.configs_hash.empty() && m.configs_hash != now.configs_hash) {
    return family.configs.filename().string() + " changed" + since + config_counts(m, family);
  }
  if (!m.harness_source.empty() && m.harness_source != now.harness_source) {
    return "the harness source " + family.harness.filename().string() + " changed" + since;
  }
  // A measurement taken without a golden compared nothing; one taken with one compared its
  // outputs with that golden, and a remade one may hold other outputs.
  if (!m.configs_hash.empty() && m.golden != now.golden) {
    return m.golden.empty() ? "a golden was made" + since + " (its outputs were not compared)"
                            : "the golden was remade" + since;
  }
  buildinfo::BuildFlags then{m.build_flags, m.build};
  buildinfo::BuildFlags built = buildinfo::read_build_flags(layout.gen_dir(m.candidate));
  if (then.known() && built.known() && then.hash != built.hash) {
    return "candidate " + m.candidate + "'s build changed" + since + ": it measured build " +
           then.hash + " (" + then.optimisation() + "), the build is now " + built.hash + " (" +
           built.optimisation() + ")";
  }
  return "";
}

} // namespace kopt::profile
