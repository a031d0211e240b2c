#include "gen/scaffold.hpp"

#include "gen/builtin_templates.hpp"
#include "gen/text_template.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace fs = std::filesystem;

namespace kopt::gen {

namespace {

// The names that differ by backend: file suffixes, the kernel's parameter and its values.
struct Flavour {
  std::string header_suffix, source_suffix, signature, param, letter, small, large;
};

Flavour flavour_of(spec::Backend backend, const std::string &args) {
  switch (backend) {
  case spec::Backend::host:
    return {".hpp", ".cpp", "void(const " + args + "&)", "UNROLL", "u", "1", "8"};
  case spec::Backend::cuda:
    return {".cuh", ".cu", "cudaError_t(const " + args + "&)", "BLOCK", "b", "128", "512"};
  case spec::Backend::hip:
    return {".hpp", ".cpp", "hipError_t(const " + args + "&)", "BLOCK", "b", "256", "1024"};
  }
  throw Error("internal: unknown backend");
}

// "row_softmax" -> "RowSoftmax"
std::string camel(const std::string &name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

} // namespace

std::map<std::string, std::string> scaffold_files(const ScaffoldRequest &request) {
  if (!util::is_identifier(request.name)) {
    throw Error("kopt init: --name '" + request.name +
                "': expected an identifier (letters, digits and _, not starting with a digit)");
  }
  const std::string &name = request.name;
  const std::string args = camel(name) + "Args";
  const Flavour f = flavour_of(request.backend, args);
  const std::string prefix = "init_" + spec::to_string(request.backend) + "_";
  const std::string header = name + "_kernel" + f.header_suffix;
  const std::string instance = "instance" + f.source_suffix + ".in";
  const std::string harness = "harness" + f.source_suffix;
  const bool cuda = request.backend == spec::Backend::cuda;
  const bool hip = request.backend == spec::Backend::hip;
  const std::string arch = !request.arch.empty() ? request.arch
                           : cuda                ? "90a"
                           : hip                 ? "gfx942"
                                                 : "";
  std::map<std::string, std::string> files;
  files["family.json"] = expand_builtin(
      "init_family.json.in", {{"name", name},
                              {"backend", spec::to_string(request.backend)},
                              {"header", header},
                              {"signature", f.signature},
                              {"instance_template", instance},
                              {"instance_name", name + "_" + f.letter + "{" + f.param + "}"},
                              {"param", f.param},
                              {"small", f.small},
                              {"large", f.large},
                              {"small_name", name + "_" + f.letter + f.small},
                              {"large_name", name + "_" + f.letter + f.large},
                              {"arch", cuda ? "sm_" + arch : arch},
                              {"harness", harness}});
  files[header] =
      expand_builtin(prefix + "kernel" + f.header_suffix + ".in", {{"name", name}, {"args", args}});
  // The instance template keeps gen's own placeholders for gen-instances to fill.
  files[instance] = expand_builtin(prefix + "instance" + f.source_suffix + ".in",
                                   {{"name", "{{name}}"},
                                    {"header", "{{header}}"},
                                    {"symbol", "{{symbol}}"},
                                    {f.param, "{{" + f.param + "}}"},
                                    {"args", args},
                                    {"kernel", name}});
  files[harness] =
      expand_builtin(prefix + "harness" + f.source_suffix + ".in",
                     {{"name", name}, {"args", args}, {"problem", camel(name) + "Problem"}});
  files["configs.csv"] = builtin_template("init_configs.csv.in");
  files["candidates/00/candidate.json"] =
      "{\"id\": \"00\", \"hypothesis\": \"baseline: the kernel kopt init wrote\", "
      "\"target\": \"global\"}\n";
  files["CMakeLists.txt"] = expand_builtin(
      "init_CMakeLists.txt.in", {{"name", name},
                                 {"dir", request.dir.lexically_normal().generic_string()},
                                 {"cuda", cuda ? "yes" : ""},
                                 {"arch", arch},
                                 {"hip", hip ? "yes" : ""}});
  return files;
}

std::vector<fs::path> write_scaffold(const ScaffoldRequest &request) {
  std::map<std::string, std::string> files = scaffold_files(request);
  std::vector<std::string> there;
  std::error_code ec;
  for (const auto &[path, text] : files) {
    if (fs::exists(request.dir / path, ec)) {
      there.push_back((request.dir / path).string());
    }
  }
  if (!there.empty()) {
    throw Error("kopt init: " + util::join(there, ", ") + (there.size() == 1 ? " is" : " are") +
                " already there: nothing was written (choose another folder, or move them)");
  }
  std::vector<fs::path> written;
  for (const auto &[path, text] : files) {
    fs::create_directories((request.dir / path).parent_path());
    util::write_file_atomic(request.dir / path, text);
    written.push_back(request.dir / path);
  }
  return written;
}

} // namespace kopt::gen
