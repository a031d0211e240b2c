#pragma once

// What a harness binary links, read from the build (ninja's link command, ldd of the binary) and
// from `nm`: the symbol rule of the identity check, that a candidate's instance objects define
// nothing the harness, its libraries or the runtime also define (no interposition).

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// Splits a POSIX shell command line (as ninja runs it through /bin/sh) into words, honouring
/// single and double quotes and backslashes; `&&`, `;` and `|` stay words of their own.
std::vector<std::string> shell_words(const std::string &command);

/// Splits a command line into its steps, the word lists between `&&`, `;` and `|` (one empty
/// step when the line is empty).
std::vector<std::vector<std::string>> command_steps(const std::string &command);

/// The files one link reads besides the system's own defaults: objects and static archives
/// (by path) and the folders and names of `-L` / `-l`.
struct LinkInputs {
  std::vector<std::filesystem::path> objects;  ///< .o / .obj files, absolute
  std::vector<std::filesystem::path> archives; ///< .a files, absolute
  std::vector<std::filesystem::path> shared;   ///< .so files named by path, absolute
  std::vector<std::filesystem::path> search;   ///< -L folders, absolute
  std::vector<std::string> libraries;          ///< -l names
};

/// Reads the link of `binary` (its file name) out of the commands ninja prints for a target
/// (`ninja -t commands -s`): the `&&`-separated step whose `-o` names a file of that name.
/// Relative paths are made absolute against `build_dir`. Empty when no step links it.
LinkInputs parse_link_command(const std::string &commands, const std::string &binary,
                              const std::filesystem::path &build_dir);

/// The `-l` names of `inputs` that are static archives in its `-L` folders (lib<name>.a with
/// no lib<name>.so beside it: a linker prefers the shared one), as paths.
std::vector<std::filesystem::path> static_libraries(const LinkInputs &inputs);

/// The shared libraries `ldd` lists as loaded (`name => /path (0x...)` and `/path (0x...)`),
/// the vdso and unfound ones left out.
std::vector<std::filesystem::path> parse_ldd(const std::string &text);

/// One global symbol an object or library defines, as `nm -A -g --defined-only` prints it.
struct DefinedSymbol {
  std::string file;    ///< the object, `archive.a:member.o`, or the shared library
  std::string name;    ///< mangled, without a symbol version (`@@GLIBC_2.17`)
  bool weak = false;   ///< W, V or u (GNU unique): another definition may win at link time
  bool shared = false; ///< from a shared library's dynamic table (`nm -D`)
};

/// Names a symbol's definer as a refusal names it: `libc.so.6`, `libkopt_harness.a(inputs.cpp.o)`,
/// `harness.cpp.o`.
std::string definer(const DefinedSymbol &symbol);

/// Parses `nm -A -g --defined-only` output (`file:address type name`); `shared` marks every
/// symbol as coming from a shared library.
std::vector<DefinedSymbol> parse_nm(const std::string &text, bool shared);

/// One symbol an object uses and does not define, as `nm -A -u` prints it (`file: U name`).
struct ReferencedSymbol {
  std::string file; ///< the object
  std::string name; ///< mangled, without a symbol version
};

/// Parses `nm -A -u` output.
std::vector<ReferencedSymbol> parse_nm_undefined(const std::string &text);

/// The reference rule: why a candidate's instance object may not call `name`, or "" when it
/// may. The timed range is the harness timer's (cudaProfilerStart / cudaProfilerStop and the
/// driver's cuProfilerStart / cuProfilerStop mark it, and the tracer times what lies inside);
/// CUPTI (cupti*) is the tracer's; and a function looked up at run time (dlopen, dlsym and their
/// variants) escapes this rule. Driver entry points (cudaGetDriverEntryPoint) stay allowed: what
/// they give is the driver API, which the tracer sees.
std::string forbidden_reference(const std::string &name);

/// A candidate symbol that something else the harness links also defines.
struct Interposition {
  DefinedSymbol candidate; ///< the candidate object's definition
  DefinedSymbol other;     ///< the other definition that makes it a problem
};

/// The symbol rule. A global symbol defined by a candidate's instance object is refused when
/// - a shared library the harness loads exports the name (any binding: an executable's
///   definition, strong or weak, wins over every library's at run time), or
/// - the candidate defines it strongly and any object or archive of the harness defines it, or
/// - the candidate defines it weakly and an object or archive of the harness defines it
///   strongly.
/// A weak definition that the harness's objects or archives also define weakly passes: an
/// inline function or template instantiation both compile from the same headers (std::min<long>).
/// The two bodies are not compared here: decide/identity compares a candidate's weak function
/// with the target's harness objects' copy (buildinfo/disassembly). Returns one entry per
/// refused name, in name order, naming the strongest other definer.
std::vector<Interposition> interpositions(const std::vector<DefinedSymbol> &candidate,
                                          const std::vector<DefinedSymbol> &others);

} // namespace kopt::buildinfo
