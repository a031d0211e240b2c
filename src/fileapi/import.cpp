#include "fileapi/import.hpp"

#include "util/cmake_text.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <sstream>

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

const Configuration &pick_config(const CodeModel &model, const std::string &wanted) {
  std::vector<std::string> names;
  for (const auto &c : model.configurations) {
    names.push_back(c.name);
  }
  std::string name = wanted;
  if (name.empty() && model.multi_config) {
    auto it = model.cache.find("CMAKE_DEFAULT_BUILD_TYPE");
    name = it != model.cache.end() && !it->second.empty() ? it->second
           : names.empty()                                ? ""
                                                          : names.front();
  }
  for (const auto &c : model.configurations) {
    if (c.name == name || (wanted.empty() && !model.multi_config)) {
      return c;
    }
  }
  throw Error(model.index_file.string() + ": no configuration '" + name + "'" +
              suggest(name, names));
}

std::string normal_path(const fs::path &path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(path), ec);
  return (ec ? fs::absolute(path) : c).lexically_normal().string();
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

} // namespace

std::vector<std::string> split_fragment(const std::string &fragment) {
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
  return out;
}

Imported select(const CodeModel &model, const ImportRequest &request) {
  const Configuration &config = pick_config(model, request.config);
  const Target *target = nullptr;
  const CompileGroup *group = nullptr;
  std::string source_path;
  if (!request.source.empty()) {
    std::string wanted = normal_path(request.source);
    std::vector<std::string> names;
    for (const auto &t : config.targets) {
      if (!request.target.empty() && t.name != request.target) {
        continue;
      }
      for (const auto &s : t.sources) {
        if (!s.compile_group) {
          continue;
        }
        names.push_back(s.path);
        if (!target && normal_path(s.path) == wanted) {
          target = &t;
          group = &t.compile_groups[*s.compile_group];
          source_path = s.path;
        }
      }
    }
    if (!target) {
      throw Error(request.source.string() + ": no target" +
                  (request.target.empty() ? "" : " named '" + request.target + "'") + " of " +
                  model.build_dir.string() + " compiles it" + suggest(wanted, names));
    }
  } else {
    std::vector<std::string> names;
    for (const auto &t : config.targets) {
      names.push_back(t.name);
      if (t.name == request.target) {
        target = &t;
      }
    }
    if (!target) {
      throw Error(model.build_dir.string() + ": no target '" + request.target + "'" +
                  (config.name.empty() ? "" : " in configuration " + config.name) +
                  suggest(request.target, names));
    }
    group = pick_group(*target, request.language);
    if (!group) {
      throw Error(target->json_file + ": target '" + target->name + "' compiles no " +
                  (request.language.empty() ? "sources" : request.language + " sources"));
    }
  }
  if (!request.language.empty() && group->language != request.language) {
    throw Error(source_path + ": compiled as " + group->language + ", not " + request.language);
  }
  Imported out;
  out.build_dir = model.build_dir.string();
  out.target = target->name;
  out.type = target->type;
  out.config = config.name;
  out.language = group->language;
  const Compiler *compiler = model.compiler(group->language);
  if (!compiler || compiler->path.empty()) {
    throw Error(model.index_file.string() + ": the toolchains reply names no " + group->language +
                " compiler");
  }
  out.compiler = compiler->path;
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
  return out;
}

std::string render_cmake(const Imported &m) {
  std::string name = "kopt_imported_" + identifier(m.target);
  std::string lang = "$<COMPILE_LANGUAGE:" + m.language + ">";
  std::ostringstream out;
  out << "# Generated by `kopt import`: target " << m.target << " (" << m.type << ") of "
      << m.build_dir << (m.config.empty() ? "" : ", configuration " + m.config)
      << (m.source.empty() ? "" : ", as it compiles " + m.source) << ".\n"
      << "# Re-run kopt import when the tree's flags change; see docs/IMPORT.md.\n";
  auto var = [&](const std::string &key, const std::string &value) {
    out << "set(KOPT_IMPORTED_" << key << " " << util::cmake_quote(value) << ")\n";
  };
  var("INTERFACE", name);
  var("BUILD_DIR", m.build_dir);
  var("TARGET", m.target);
  var("TYPE", m.type);
  var("CONFIG", m.config);
  var("LANGUAGE", m.language);
  var("COMPILER", m.compiler);
  var("STANDARD", m.standard);
  var("SOURCE", m.source);
  var("ARTIFACT", m.artifact);
  out << "\n# The project must compile " << m.language
      << " with the tree's compiler, or the candidates measure another compiler's code.\n"
      << "if(NOT CMAKE_" << m.language << "_COMPILER)\n"
      << "  message(FATAL_ERROR \"kopt import: enable " << m.language
      << " before using ${CMAKE_CURRENT_LIST_FILE}\")\n"
      << "endif()\n"
      << "file(REAL_PATH \"${CMAKE_" << m.language << "_COMPILER}\" _kopt_ours)\n"
      << "file(REAL_PATH \"${KOPT_IMPORTED_COMPILER}\" _kopt_theirs)\n"
      << "if(NOT _kopt_ours STREQUAL _kopt_theirs)\n"
      << "  message(FATAL_ERROR \"kopt import: this project's " << m.language
      << " compiler is ${CMAKE_" << m.language << "_COMPILER}, the tree's is "
      << "${KOPT_IMPORTED_COMPILER}: configure with -DCMAKE_" << m.language
      << "_COMPILER=${KOPT_IMPORTED_COMPILER}\")\n"
      << "endif()\n\n"
      << "if(NOT TARGET " << name << ")\n"
      << "  add_library(" << name << " INTERFACE)\n";
  if (!m.defines.empty()) {
    out << "  target_compile_definitions(" << name << " INTERFACE\n";
    for (const auto &d : m.defines) {
      out << "    \"$<" << lang << ":" << escape_genex(d) << ">\"\n";
    }
    out << "  )\n";
  }
  for (bool system : {false, true}) {
    std::vector<std::string> dirs;
    for (const auto &inc : m.includes) {
      if (inc.system == system) {
        dirs.push_back(inc.path);
      }
    }
    if (!dirs.empty()) {
      out << "  target_include_directories(" << name << (system ? " SYSTEM" : "") << " INTERFACE\n";
      for (const auto &d : dirs) {
        out << "    \"$<" << lang << ":" << escape_genex(d) << ">\"\n";
      }
      out << "  )\n";
    }
  }
  if (!m.fragments.empty()) {
    // SHELL: keeps each fragment's arguments together and stops cmake de-duplicating them.
    out << "  target_compile_options(" << name << " INTERFACE\n";
    for (const auto &f : m.fragments) {
      out << "    \"$<" << lang << ":SHELL:" << escape_genex(f) << ">\"\n";
    }
    out << "  )\n";
  }
  std::string feature = m.language == "CXX"    ? "cxx_std_"
                        : m.language == "CUDA" ? "cuda_std_"
                        : m.language == "HIP"  ? "hip_std_"
                        : m.language == "C"    ? "c_std_"
                                               : "";
  if (!m.standard.empty() && !feature.empty()) {
    out << "  target_compile_features(" << name << " INTERFACE " << feature << m.standard << ")\n";
  }
  out << "endif()\n";
  return out.str();
}

} // namespace kopt::fileapi
