#pragma once

#include "fileapi/import.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kopt::fileapi {

/// Reads what a build that is not CMake's left behind: `path` is a compile_commands.json, or a
/// folder holding one, or a ninja build folder without one (its `ninja -t compdb` is read then,
/// run through `runner`). Throws kopt::Error naming the file and the entry that is malformed.
nlohmann::json read_compile_database(const std::filesystem::path &path,
                                     util::ProcessRunner &runner);

/// The import of `request.source`'s entry of a compile database (read_compile_database): the
/// compiler (resolved on PATH when the entry names it bare), every argument in order but the
/// compile step's own (-c, -o, the source, dependency-file options) as the fragments, relative
/// include paths made absolute against the entry's directory, the language (CUDA for nvcc and
/// .cu, C for .c, else CXX: hipcc is the C++ compiler, as CMake's HIP language refuses it) and
/// the -std standard. Baseline "compile": such a build leaves no library kopt could link. An
/// unknown source, or one compiled twice with different arguments, throws naming the database.
Imported select_from_database(const nlohmann::json &database, const std::string &where,
                              const ImportRequest &request);

} // namespace kopt::fileapi
