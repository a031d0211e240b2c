#pragma once

#include "heuristic/rules.hpp"
#include "spec/defaults.hpp"
#include "spec/roofline.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kopt::spec {

/// One kernel instance of a family: its name and its template parameters' values as text.
struct Instance {
  std::string name;
  std::map<std::string, std::string> params;
};

/// How config rows group into config classes: the columns and optional bucket edges.
struct ClassSpec {
  std::vector<std::string> columns;
  std::map<std::string, std::vector<double>> buckets;
};

/// What a family runs on: the host CPU, an NVIDIA GPU (CUDA) or an AMD GPU (HIP).
enum class Backend { host, cuda, hip };

/// Returns family.json's spelling of a backend: "host", "cuda" or "hip".
std::string to_string(Backend backend);

/// Which instances a build compiles: all of them, or only those dispatch can reach.
enum class Compile { all, dispatch };

/// How the keep test weighs configs: equally, by the configs file's `count` (a geomean weighted
/// by calls), or by traffic: each config's share of the application's kernel time (count x
/// BEST's time), the weighted change being that of the application's kernel time.
enum class KeepWeighting { equal, count, traffic };

/// An application that runs the family's kernels: built once per candidate from its sources and
/// the candidate's generated ones, run side by side with BEST's variant (`kopt app`).
struct App {
  std::vector<std::filesystem::path> sources; ///< in the family folder
  /// What one run executes: `{exe}` stands for the variant's executable (default: `{exe}`).
  std::vector<std::string> command;
  int rounds = 10;      ///< side-by-side rounds: each runs BEST's and the candidate's variant once
  double timeout_s = 0; ///< one run's limit; 0: the family's timeout_s
};

/// A parsed and validated family.json (see docs/FORMATS.md). Paths are absolute.
struct Family {
  std::filesystem::path file; ///< family.json itself
  std::filesystem::path dir;  ///< its folder
  std::string name;
  Backend backend = Backend::host;
  std::string impl;
  std::string kernel_header;
  /// kernel.types: the header that declares the signature's types, when it is not the kernel
  /// header ("" otherwise). Generated code other than the instances includes only it, so that a
  /// change of the kernel recompiles the instance TUs alone, never the harness.
  std::string kernel_types;
  std::string kernel_signature;
  std::string kernel_template; ///< an editable-style file name, resolved like editable files
  std::string kernel_name;     ///< the instance name pattern
  std::vector<std::string> parameters;
  std::vector<Instance> instances; ///< in family.json order
  std::string default_kernel;
  heuristic::RuleList heuristic;
  std::filesystem::path heuristic_file; ///< empty when the rules are inline or absent
  std::filesystem::path tuned;          ///< empty when no tuned table
  std::string arch;
  Compile compile = Compile::all;
  std::vector<std::string> dispatch;
  std::filesystem::path configs;
  ClassSpec classes;
  std::filesystem::path harness;
  std::string kernel_regex = ".*";
  std::vector<std::string> editable;
  std::filesystem::path candidates_dir;
  double timeout_s = defaults::timeout_s;
  double compile_budget_s = 0; ///< the family's build wall-time budget; 0: no budget
  int warmup = defaults::warmup;
  int repeat = defaults::repeat;
  int rounds = defaults::rounds; ///< side-by-side rounds of BEST and candidate per keep test
  /// Host families: every harness run on the one CPU kopt is on (false: wherever the
  /// scheduler puts it, for kernels that start threads of their own).
  bool pin_cpu = true;
  /// CUDA families: what times a benchmark, "cupti" or "ncu"; "" for kopt's choice (the CUPTI
  /// tracer when kopt has it, else ncu).
  std::string profiler;
  /// A class's change must lie beyond this to count at once.
  double keep_threshold = defaults::keep_threshold;
  double keep_confidence = defaults::keep_confidence; ///< the confidence of each class's interval
  /// How much worse a non-target class may get and keep.
  double keep_max_regression = defaults::keep_max_regression;
  KeepWeighting keep_weighting = KeepWeighting::equal; ///< keep.weighting
  std::optional<App> app;                              ///< "app"; absent: the family names none
  std::optional<Roofline> roofline; ///< "roofline"; absent: no plausibility gate, no fractions

  /// Returns the instance called `name`, or nullptr.
  const Instance *find_instance(const std::string &name) const;

  /// What generated code other than the instances includes for the signature's types: the
  /// kernel.types header (the candidate's copy, "src/<file>", when it is editable), else the
  /// candidate's kernel header ("src/<header>").
  std::string types_include() const;
};

/// Reads and validates family.json. Every problem is a kopt::Error that names the file, the
/// field (as a JSON path, e.g. `instances[3].TM`) and what was expected.
Family load_family(const std::filesystem::path &file);

/// Returns the config class of one config row (`header` names the row's columns): see
/// "Config classes" in docs/FORMATS.md. Throws when a class column is missing from `header`.
std::string config_class(const ClassSpec &classes, const std::vector<std::string> &header,
                         const std::vector<std::string> &row);

} // namespace kopt::spec
