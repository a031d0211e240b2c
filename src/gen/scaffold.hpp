#pragma once

// `kopt init`: a new family's files (host, cuda or hip), made to configure, build and bench as
// they are: family.json,
// the kernel header and instance template a candidate edits, the harness, configs.csv,
// candidates/00 and a CMakeLists.txt that is a project of its own or a part of the user's.

#include "spec/family.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::gen {

/// What to scaffold: the family's name (an identifier), its backend and its folder.
struct ScaffoldRequest {
  std::string name;
  spec::Backend backend = spec::Backend::host;
  std::filesystem::path dir;
  /// The GPU architecture: cuda's CMAKE_CUDA_ARCHITECTURES when the project sets none ("90a"
  /// when empty; family.json's arch is then sm_<it>), hip's family.json arch ("gfx942").
  std::string arch;
};

/// The files of the new family, by path relative to its folder; deterministic.
std::map<std::string, std::string> scaffold_files(const ScaffoldRequest &request);

/// Writes the files into request.dir, each atomically; refuses (kopt::Error naming them) when
/// any of them is already there, before writing anything, so nothing of the user's is lost.
/// Returns the paths written, in order.
std::vector<std::filesystem::path> write_scaffold(const ScaffoldRequest &request);

} // namespace kopt::gen
