#include "fileapi/import.hpp"

#include "fileapi/compile_rule.hpp"
#include "gen/text_template.hpp"
#include "util/cmake_text.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace kopt::fileapi {

namespace fs = std::filesystem;

namespace {

// "did you mean" list: the nearest few names by edit distance.
std::string suggest(const std::string &word, std::vector<std::string> names) {
  if (names.empty()) {
    return " (there are none)";
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::stable_sort(names.begin(), names.end(), [&](const std::string &a, const std::string &b) {
    return util::edit_distance(word, a) < util::edit_distance(word, b);
  });
  std::string nearest = util::nearest(word, names);
  names.resize(std::min<size_t>(names.size(), 5));
  return (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") +
         " (nearest: " + util::join(names, ", ") + ")";
}

const Configuration &pick_config(const CodeModel &model, const std::string &wanted,
                                 std::string &reason) {
  std::vector<std::string> names;
  for (const auto &c : model.configurations) {
    names.push_back(c.name);
  }
  std::string name = wanted;
  reason = "--config";
  if (name.empty() && model.multi_config) {
    auto it = model.cache.find("CMAKE_DEFAULT_BUILD_TYPE");
    bool by_default = it != model.cache.end() && !it->second.empty();
    name = by_default ? it->second : names.empty() ? "" : names.front();
    reason = (by_default ? "the tree's CMAKE_DEFAULT_BUILD_TYPE"
                         : "the first of the tree's configurations " + util::join(names, ", ")) +
             "; --config chooses another";
  } else if (name.empty()) {
    reason = "the tree's CMAKE_BUILD_TYPE";
  }
  for (const auto &c : model.configurations) {
    if (c.name == name || (wanted.empty() && !model.multi_config)) {
      return c;
    }
  }
  throw Error(model.index_file.string() + ": no configuration '" + name + "'" +
              suggest(name, names));
}

bool is_library(const std::string &type) {
  return type == "STATIC_LIBRARY" || type == "SHARED_LIBRARY" || type == "MODULE_LIBRARY";
}

// Library mode needs a library file to link that holds the kernels; anything else (an
// executable, an object library) lends its flags only, and 00 compiles its own instances.
void pick_baseline(Imported &out, const std::string &wanted) {
  std::string kind =
      (std::string("AEIOU").find(out.type.substr(0, 1)) != std::string::npos ? "an " : "a ") +
      out.type;
  bool library = is_library(out.type) && !out.artifact.empty();
  if (wanted == "library" && !library) {
    throw Error("kopt import --baseline library: " + out.target + " is " + kind +
                ", not a library whose file baseline 00 could link");
  }
  if (wanted == "compile") {
    out.baseline = "compile";
    out.baseline_reason = "--baseline compile: baseline 00 compiles its own instances with " +
                          out.target + "'s flags";
  } else if (library) {
    out.baseline = "library";
    out.baseline_reason = out.target + " is " + kind + ": baseline 00 links " + out.artifact +
                          " and compiles no instance, if it defines the family's kopt_instance_ "
                          "symbols (kopt_add_family checks; --baseline compile to compile them)";
  } else {
    out.baseline = "compile";
    out.baseline_reason = out.target + " is " + kind +
                          ", not a library of the kernels: baseline 00 compiles its own "
                          "instances with the tree's flags";
  }
}

// The kernel language of a target picked by name: the GPU language when it has one.
const CompileGroup *pick_group(const Target &t, const std::string &language) {
  std::vector<std::string> order = language.empty()
                                       ? std::vector<std::string>{"CUDA", "HIP", "CXX", "C"}
                                       : std::vector<std::string>{language};
  for (const auto &lang : order) {
    for (const auto &g : t.compile_groups) {
      if (g.language == lang) {
        return &g;
      }
    }
  }
  return nullptr;
}

// A quoted CMake argument inside $<$<COMPILE_LANGUAGE:L>:...>: characters that end or split
// the generator expression become $<ANGLE-R>, $<COMMA> and $<SEMICOLON>.
std::string escape_genex(const std::string &text) {
  std::string out;
  for (char c : text) {
    out += c == '>'   ? "$<ANGLE-R>"
           : c == ',' ? "$<COMMA>"
           : c == ';' ? "$<SEMICOLON>"
                      : util::cmake_escape(std::string(1, c));
  }
  return out;
}

std::string identifier(const std::string &name) {
  std::string out;
  for (char c : name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

// The files of a group, for messages: its first source and how many more.
std::string group_sources(const Target &t, const CompileGroup &g) {
  if (g.sources.empty()) {
    return "no source";
  }
  std::string first = t.sources[g.sources.front()].path;
  return first +
         (g.sources.size() > 1 ? " and " + std::to_string(g.sources.size() - 1) + " more" : "");
}

// A target picked by name whose sources of the group's language compile with different flags:
// which group is the kernels' is the user's to say (--source), never a guess.
void refuse_to_guess(const Target &t, const CompileGroup &chosen) {
  std::vector<const CompileGroup *> same_language;
  bool differ = false;
  for (const auto &g : t.compile_groups) {
    if (g.language != chosen.language) {
      continue;
    }
    same_language.push_back(&g);
    differ = differ || g.fragments != chosen.fragments || g.defines != chosen.defines;
  }
  if (!differ) {
    return;
  }
  std::vector<std::string> listed;
  for (size_t i = 0; i < same_language.size(); ++i) {
    const CompileGroup &g = *same_language[i];
    listed.push_back("group " + std::to_string(i + 1) + " (" + group_sources(t, g) +
                     "): " + util::join(g.fragments, " ") +
                     (g.defines.empty() ? "" : " -D" + util::join(g.defines, " -D")));
  }
  throw Error(t.json_file + ": target '" + t.name + "' compiles its " + chosen.language +
              " sources in " + std::to_string(same_language.size()) +
              " groups with different flags: " + util::join(listed, "; ") +
              "; give --source with the kernel source whose flags the family should compile with");
}

// The target and compile group a request names, and the source it was chosen by.
struct Picked {
  const Target *target = nullptr;
  const CompileGroup *group = nullptr;
  std::string source;
};

Picked pick_by_source(const CodeModel &model, const Configuration &config,
                      const ImportRequest &request) {
  std::string wanted = normal_path(request.source);
  std::vector<std::string> names;
  Picked picked;
  for (const auto &t : config.targets) {
    if (!request.target.empty() && t.name != request.target) {
      continue;
    }
    for (const auto &s : t.sources) {
      if (!s.compile_group) {
        continue;
      }
      names.push_back(s.path);
      if (!picked.target && normal_path(s.path) == wanted) {
        picked = {&t, &t.compile_groups[*s.compile_group], s.path};
      }
    }
  }
  if (!picked.target) {
    throw Error(request.source.string() + ": no target" +
                (request.target.empty() ? "" : " named '" + request.target + "'") + " of " +
                model.build_dir.string() + " compiles it" + suggest(wanted, names));
  }
  return picked;
}

Picked pick_by_target(const CodeModel &model, const Configuration &config,
                      const ImportRequest &request) {
  std::vector<std::string> names;
  Picked picked;
  for (const auto &t : config.targets) {
    names.push_back(t.name);
    if (t.name == request.target) {
      picked.target = &t;
    }
  }
  if (!picked.target) {
    throw Error(model.build_dir.string() + ": no target '" + request.target + "'" +
                (config.name.empty() ? "" : " in configuration " + config.name) +
                suggest(request.target, names));
  }
  picked.group = pick_group(*picked.target, request.language);
  if (!picked.group) {
    throw Error(picked.target->json_file + ": target '" + picked.target->name + "' compiles no " +
                (request.language.empty() ? "sources" : request.language + " sources"));
  }
  return picked;
}

} // namespace

std::string normal_path(const fs::path &path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(path), ec);
  return (ec ? fs::absolute(path) : c).lexically_normal().string();
}

std::vector<std::string> split_fragment(const std::string &fragment, char *open_quote) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < fragment.size(); ++i) {
    char c = fragment[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        word += c;
      }
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < fragment.size() &&
                 std::string("\"\\$`").find(fragment[i + 1]) != std::string::npos) {
        word += fragment[++i];
      } else {
        word += c;
      }
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        out.push_back(word);
        word.clear();
        in_word = false;
      }
    } else {
      in_word = true;
      if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\' && i + 1 < fragment.size()) {
        word += fragment[++i];
      } else {
        word += c;
      }
    }
  }
  if (in_word) {
    out.push_back(word);
  }
  if (open_quote) {
    *open_quote = quote;
  }
  return out;
}

Imported select(const CodeModel &model, const ImportRequest &request) {
  if (!request.baseline.empty() && request.baseline != "library" && request.baseline != "compile") {
    throw Error("kopt import --baseline: expected library or compile, got '" + request.baseline +
                "'");
  }
  std::string config_reason;
  const Configuration &config = pick_config(model, request.config, config_reason);
  Picked picked = request.source.empty() ? pick_by_target(model, config, request)
                                         : pick_by_source(model, config, request);
  const Target *target = picked.target;
  const CompileGroup *group = picked.group;
  const std::string &source_path = picked.source;
  if (!request.language.empty() && group->language != request.language) {
    throw Error(source_path + ": compiled as " + group->language + ", not " + request.language);
  }
  if (request.source.empty()) {
    refuse_to_guess(*target, *group);
  }
  Imported out;
  out.build_dir = model.build_dir.string();
  out.target = target->name;
  out.type = target->type;
  out.config = config.name;
  out.config_reason = config_reason;
  out.language = group->language;
  const Compiler *compiler = model.compiler(group->language);
  if (!compiler || compiler->path.empty()) {
    throw Error(model.index_file.string() + ": the toolchains reply names no " + group->language +
                " compiler");
  }
  out.compiler = compiler->path;
  if (out.language == "CUDA") {
    auto host = model.cache.find("CMAKE_CUDA_HOST_COMPILER");
    out.host_compiler = host == model.cache.end() ? "" : host->second;
  }
  out.standard = group->standard;
  out.fragments = group->fragments;
  for (const auto &f : group->fragments) {
    for (auto &arg : split_fragment(f)) {
      out.flags.push_back(std::move(arg));
    }
  }
  out.defines = group->defines;
  if (model.multi_config) {
    // Multi-config generators add this define to every compile; the File API does not list it.
    out.defines.push_back("CMAKE_INTDIR=\"" + config.name + "\"");
  }
  out.includes = group->includes;
  out.source = source_path;
  if (!target->artifacts.empty()) {
    out.artifact = target->artifacts.front();
  }
  pick_baseline(out, request.baseline);
  // Separable compilation is the rule's, not a fragment: read the generator's compile rule.
  if (auto rule = read_compile_rule(model, *target, out.language, config.name)) {
    out.separable = rule->separable();
    out.rule_args = rule->arguments;
    out.rule_file = rule->file;
  } else if (out.language == "CUDA" || out.language == "HIP") {
    out.notes.push_back("no " + out.language + " compile rule of " + out.target + " found for " +
                        model.generator +
                        ": cannot tell whether it compiles relocatable device code; assumed not");
  }
  if (out.language == "HIP" && fs::path(out.compiler).filename().string().starts_with("hipcc")) {
    // CMake's HIP language refuses the hipcc wrapper (CK's trees set it after project()): the
    // consumer compiles the instances as CXX with hipcc as its C++ compiler, as those trees do.
    out.language = "CXX";
    out.notes.push_back("the tree compiles HIP with " + out.compiler +
                        ", which CMake's HIP language refuses: the family compiles its instances "
                        "as CXX with it (configure the consumer with -DCMAKE_CXX_COMPILER=" +
                        out.compiler + ")");
  }
  return out;
}

std::string render_cmake(const Imported &m) {
  // One project may import the same target from two trees, configurations or sources: the
  // name carries a hash of what was imported, so each import gets an interface of its own.
  util::Hasher hasher;
  hasher.add(m.build_dir).add(m.target).add(m.config).add(m.language).add(m.source);
  std::string name = "kopt_imported_" + identifier(m.target) + "_" + hasher.hex().substr(0, 8);
  // One quoted argument per line, inside $<$<COMPILE_LANGUAGE:L>:...>.
  auto lines = [&](const std::vector<std::string> &items, const std::string &prefix) {
    std::vector<std::string> out;
    for (const auto &item : items) {
      out.push_back("    \"$<$<COMPILE_LANGUAGE:" + m.language + ">:" + prefix +
                    escape_genex(item) + ">\"");
    }
    return util::join(out, "\n");
  };
  std::vector<std::string> includes[2];
  for (const auto &inc : m.includes) {
    includes[inc.system ? 1 : 0].push_back(inc.path);
  }
  return gen::expand_builtin(
      "imported_target.cmake.in",
      {{"target", m.target},
       {"type", m.type},
       {"build_dir", m.build_dir},
       {"config", m.config},
       {"source", m.source},
       {"language", m.language},
       {"interface", name},
       {"interface_quoted", util::cmake_quote(name)},
       {"build_dir_quoted", util::cmake_quote(m.build_dir)},
       {"target_quoted", util::cmake_quote(m.target)},
       {"type_quoted", util::cmake_quote(m.type)},
       {"config_quoted", util::cmake_quote(m.config)},
       {"language_quoted", util::cmake_quote(m.language)},
       {"compiler_quoted", util::cmake_quote(m.compiler)},
       {"standard_quoted", util::cmake_quote(m.standard)},
       {"source_quoted", util::cmake_quote(m.source)},
       {"artifact_quoted", util::cmake_quote(m.artifact)},
       {"baseline_quoted", util::cmake_quote(m.baseline)},
       {"baseline_reason_quoted", util::cmake_quote(m.baseline_reason)},
       {"separable", m.separable ? "ON" : "OFF"},
       {"cuda", m.language == "CUDA" ? "1" : ""},
       {"host_compiler_quoted", util::cmake_quote(m.host_compiler)},
       {"defines", lines(m.defines, "")},
       {"includes", lines(includes[0], "")},
       {"system_includes", lines(includes[1], "")},
       // One SHELL: group of every fragment, in order: CMake de-duplicates options across
       // groups, so were each fragment a group, the second -mllvm of `-mllvm A -mllvm B` (or
       // --param of `--param a=1 --param b=2`) would go and B become an argument of its own.
       {"fragments",
        lines(m.fragments.empty() ? std::vector<std::string>{}
                                  : std::vector<std::string>{util::join(m.fragments, " ")},
              "SHELL:")}});
}

} // namespace kopt::fileapi
