#pragma once

#include "candidate/candidate.hpp"
#include "spec/family.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::gen {

/// What gen-instances produced for one candidate.
struct Generated {
  std::string candidate;
  std::string hash;
  std::string base;                  ///< the candidate.json base, "" for the baseline
  std::string target;                ///< the candidate.json target ("global" or a class)
  std::filesystem::path dir;         ///< the candidate's output folder
  std::vector<std::string> compiled; ///< instance names compiled, sorted
  std::vector<std::filesystem::path>
      sources;                               ///< the TUs to compile (instances, registry, dispatch)
  std::vector<std::filesystem::path> inputs; ///< files the output depends on (for re-running)
  /// Files whose change changes the build's shape (the chain's candidate.json files, family.json,
  /// the configs, templates, instance overrides, tuned table, heuristic file): CMake
  /// re-configures when one changes.
  std::vector<std::filesystem::path> configure_inputs;
  std::vector<std::filesystem::path> outputs; ///< every file generated, sorted
  std::vector<std::filesystem::path> written; ///< files whose content changed this run
  std::vector<std::filesystem::path> removed; ///< stale files of an earlier run, deleted
  std::vector<std::string> warnings;          ///< e.g. duplicate tuned shapes
};

/// Generates one candidate's files into `out_root/<id>/` (docs/FORMATS.md), writing only files
/// whose content changed. A tuned row naming a kernel that is not an instance is a kopt::Error
/// naming the tuned file, its line and the kernel.
Generated generate_candidate(const spec::Family &family, const candidate::CandidateSet &set,
                             const std::string &id, const std::filesystem::path &out_root);

/// Writes the configure-time CMake fragment describing every candidate's generated files,
/// with KOPT_<family>_CONFIGURE_DEPENDS: every candidate's configure_inputs.
void write_cmake_fragment(const spec::Family &family, const std::vector<Generated> &generated,
                          const std::filesystem::path &file);

} // namespace kopt::gen
