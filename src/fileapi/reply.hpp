#pragma once

#include "util/error.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kopt::fileapi {

/// One include folder of a compile group; `system` when it is passed as -isystem.
struct Include {
  std::string path;
  bool system = false;
};

/// Sources of one target compiled with the same language, flags, defines and includes.
struct CompileGroup {
  std::string language;               ///< CXX, CUDA, HIP, C, ...
  std::vector<std::string> fragments; ///< command fragments, in the order cmake passes them
  std::vector<std::string> defines;   ///< NAME or NAME=VALUE, unescaped
  std::vector<Include> includes;      ///< in command-line order
  std::string standard;               ///< language standard ("17"), "" when none (codemodel < 2.2)
  std::vector<size_t> sources;        ///< indexes into Target::sources
};

/// One source file of a target; `path` is absolute.
struct Source {
  std::string path;
  bool generated = false;
  std::optional<size_t> compile_group; ///< none for headers and rule files
};

/// One build target of one configuration.
struct Target {
  std::string name;
  std::string id;
  std::string type;       ///< EXECUTABLE, STATIC_LIBRARY, SHARED_LIBRARY, MODULE_LIBRARY, ...
  std::string source_dir; ///< absolute
  std::string build_dir;  ///< absolute
  std::vector<Source> sources;
  std::vector<CompileGroup> compile_groups;
  std::vector<std::string> artifacts;    ///< absolute paths of what the target builds
  std::vector<std::string> dependencies; ///< ids of the targets it depends on
  std::string json_file;                 ///< the reply file it was read from
};

/// One folder with a CMakeLists.txt: its source and build paths and the targets it defines.
struct Directory {
  std::string source; ///< absolute
  std::string build;  ///< absolute
  std::optional<size_t> parent;
  std::vector<size_t> targets; ///< indexes into Configuration::targets
};

/// One build configuration (one per entry of CMAKE_CONFIGURATION_TYPES under multi-config
/// generators, the CMAKE_BUILD_TYPE otherwise, possibly "").
struct Configuration {
  std::string name;
  std::vector<Directory> directories;
  std::vector<Target> targets;
};

/// One compiler of the toolchains reply.
struct Compiler {
  std::string language;
  std::string path;
  std::string id;
  std::string version;
};

/// What kopt reads of a build tree's File API reply: codemodel v2, toolchains v1, cache v2.
struct CodeModel {
  std::filesystem::path build_dir;
  std::filesystem::path source_dir;
  std::filesystem::path index_file; ///< the reply index it was read from
  std::string generator;
  bool multi_config = false;
  int codemodel_minor = 0;
  std::vector<Configuration> configurations;
  std::vector<Compiler> compilers;
  std::map<std::string, std::string> cache; ///< cache entry name -> value

  /// Returns the compiler of `language`, or nullptr when the tree has none.
  const Compiler *compiler(const std::string &language) const;
};

/// The query kopt writes (codemodel v2, toolchains v1, cache v2), as JSON text.
std::string query_text();

/// Where kopt's client query lives in `build_dir`.
std::filesystem::path query_file(const std::filesystem::path &build_dir);

/// Reads the newest reply index of `build_dir` and every file kopt's query got. Throws
/// kopt::Error naming the file and field for malformed replies and for error replies; a
/// referenced file that is missing throws ReplyVanished.
CodeModel read_reply(const std::filesystem::path &build_dir);

/// Thrown by read_reply when the index names a file that is gone (cmake regenerated the reply
/// while kopt read it, or the index is wrong); load() reads the new index then. A kopt::Error,
/// so a caller of read_reply alone gets an error that names the file.
struct ReplyVanished : Error {
  using Error::Error;
};

/// Returns the value of `name` in `build_dir`/CMakeCache.txt, or "" when it has none.
std::string cache_value(const std::filesystem::path &build_dir, const std::string &name);

/// Writes kopt's query into `build_dir` (a configured CMake tree, else kopt::Error), runs the
/// tree's own cmake (CMAKE_COMMAND of its cache) through `runner` when the reply is missing or
/// older than the query, saying so on `notes`, and returns the reply, reading the index again
/// when a file it names has vanished.
CodeModel load(const std::filesystem::path &build_dir, util::ProcessRunner &runner,
               std::ostream &notes);

} // namespace kopt::fileapi
