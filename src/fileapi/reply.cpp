#include "fileapi/reply.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kopt::fileapi {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where a field sits, for error messages: "<file>: <field path>".
struct Where {
  std::string file;
  std::string field;

  Where at(const std::string &key) const { return {file, field.empty() ? key : field + "." + key}; }
  Where at(size_t index) const { return {file, field + "[" + std::to_string(index) + "]"}; }
  [[noreturn]] void fail(const std::string &what) const {
    throw Error(file + ": " + (field.empty() ? "" : field + ": ") + what);
  }
};

const json &require(const json &object, const std::string &key, json::value_t type,
                    const Where &where) {
  if (!object.is_object()) {
    where.fail("expected an object");
  }
  auto it = object.find(key);
  if (it == object.end()) {
    where.at(key).fail("missing");
  }
  bool ok = it->type() == type ||
            (type == json::value_t::number_unsigned && it->is_number_integer() && *it >= 0);
  if (!ok) {
    const char *expected = type == json::value_t::string    ? "a string"
                           : type == json::value_t::array   ? "an array"
                           : type == json::value_t::object  ? "an object"
                           : type == json::value_t::boolean ? "a boolean"
                                                            : "a non-negative integer";
    where.at(key).fail(std::string("expected ") + expected + ", got " + it->dump());
  }
  return *it;
}

std::string string_field(const json &object, const std::string &key, const Where &where) {
  return require(object, key, json::value_t::string, where).get<std::string>();
}

size_t index_field(const json &object, const std::string &key, const Where &where) {
  return require(object, key, json::value_t::number_unsigned, where).get<size_t>();
}

// Optional fields: absent is fine (older codemodel minors), present must have the right type.
const json *optional(const json &object, const std::string &key, json::value_t type,
                     const Where &where) {
  if (!object.contains(key)) {
    return nullptr;
  }
  return &require(object, key, type, where);
}

// Whether an array field may be absent (older codemodel minors), then holding no elements.
enum class Presence { required, optional };

// Calls visit(element, where) for each element of the array `key` of `object`.
template <typename Visit>
void for_each_element(const json &object, const std::string &key, Presence presence,
                      const Where &where, Visit visit) {
  const json *array = presence == Presence::required
                          ? &require(object, key, json::value_t::array, where)
                          : optional(object, key, json::value_t::array, where);
  for (size_t i = 0; array != nullptr && i < array->size(); ++i) {
    visit((*array)[i], where.at(key).at(i));
  }
}

std::vector<size_t> indexes(const json &object, const std::string &key, const Where &where) {
  std::vector<size_t> out;
  if (const json *list = optional(object, key, json::value_t::array, where)) {
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_number_integer() || (*list)[i] < 0) {
        where.at(key).at(i).fail("expected a non-negative integer");
      }
      out.push_back((*list)[i].get<size_t>());
    }
  }
  return out;
}

// Paths in the reply are relative to the top-level source or build folder, or absolute.
std::string absolute(const std::string &path, const fs::path &base) {
  fs::path p(path);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

json read_referenced(const fs::path &reply_dir, const std::string &name, const Where &where) {
  fs::path path = reply_dir / name;
  if (!fs::exists(path)) {
    throw ReplyVanished(path.string() + ": referenced by " + where.file + " but gone");
  }
  return util::read_json(path);
}

void check_error(const json &object, const Where &where) {
  if (object.is_object() && object.contains("error")) {
    where.fail("cmake answered with an error: " + util::dump_json(object["error"], -1));
  }
}

CompileGroup read_compile_group(const json &group, const Where &where) {
  CompileGroup out;
  out.language = string_field(group, "language", where);
  for_each_element(group, "compileCommandFragments", Presence::optional, where,
                   [&](const json &fragment, const Where &w) {
                     out.fragments.push_back(string_field(fragment, "fragment", w));
                   });
  for_each_element(group, "defines", Presence::optional, where,
                   [&](const json &define, const Where &w) {
                     out.defines.push_back(string_field(define, "define", w));
                   });
  for_each_element(
      group, "includes", Presence::optional, where, [&](const json &include, const Where &w) {
        Include inc{string_field(include, "path", w), false};
        if (const json *system = optional(include, "isSystem", json::value_t::boolean, w)) {
          inc.system = system->get<bool>();
        }
        out.includes.push_back(inc);
      });
  if (const json *standard = optional(group, "languageStandard", json::value_t::object, where)) {
    out.standard = string_field(*standard, "standard", where.at("languageStandard"));
  }
  out.sources = indexes(group, "sourceIndexes", where);
  return out;
}

// One of a target's sources; its compile group must be one of `t`'s, read before it.
Source read_source(const json &s, const Where &sw, const Target &t, const CodeModel &model) {
  Source source{absolute(string_field(s, "path", sw), model.source_dir), false, {}};
  if (const json *generated = optional(s, "isGenerated", json::value_t::boolean, sw)) {
    source.generated = generated->get<bool>();
  }
  if (s.contains("compileGroupIndex")) {
    source.compile_group = index_field(s, "compileGroupIndex", sw);
    if (*source.compile_group >= t.compile_groups.size()) {
      sw.at("compileGroupIndex").fail("no compile group " + std::to_string(*source.compile_group));
    }
  }
  return source;
}

Target read_target(const fs::path &reply_dir, const json &entry, const CodeModel &model,
                   const Where &where) {
  std::string file = string_field(entry, "jsonFile", where);
  json object = read_referenced(reply_dir, file, where);
  Where w{(reply_dir / file).string(), ""};
  Target t;
  t.json_file = w.file;
  t.name = string_field(object, "name", w);
  t.id = string_field(object, "id", w);
  t.type = string_field(object, "type", w);
  const json &paths = require(object, "paths", json::value_t::object, w);
  t.source_dir = absolute(string_field(paths, "source", w.at("paths")), model.source_dir);
  t.build_dir = absolute(string_field(paths, "build", w.at("paths")), model.build_dir);
  for_each_element(object, "compileGroups", Presence::optional, w,
                   [&](const json &group, const Where &gw) {
                     t.compile_groups.push_back(read_compile_group(group, gw));
                   });
  for_each_element(object, "sources", Presence::optional, w, [&](const json &s, const Where &sw) {
    t.sources.push_back(read_source(s, sw, t, model));
  });
  for_each_element(
      object, "artifacts", Presence::optional, w, [&](const json &artifact, const Where &aw) {
        t.artifacts.push_back(absolute(string_field(artifact, "path", aw), model.build_dir));
      });
  for_each_element(object, "dependencies", Presence::optional, w,
                   [&](const json &dependency, const Where &dw) {
                     t.dependencies.push_back(string_field(dependency, "id", dw));
                   });
  return t;
}

Directory read_directory(const json &object, const Where &w, const CodeModel &model) {
  Directory dir;
  dir.source = absolute(string_field(object, "source", w), model.source_dir);
  dir.build = absolute(string_field(object, "build", w), model.build_dir);
  if (object.contains("parentIndex")) {
    dir.parent = index_field(object, "parentIndex", w);
  }
  dir.targets = indexes(object, "targetIndexes", w);
  return dir;
}

void read_codemodel(const fs::path &reply_dir, const json &object, const Where &w,
                    CodeModel &model) {
  const json &paths = require(object, "paths", json::value_t::object, w);
  model.source_dir = string_field(paths, "source", w.at("paths"));
  model.build_dir = string_field(paths, "build", w.at("paths"));
  for_each_element(
      object, "configurations", Presence::required, w, [&](const json &entry, const Where &cw) {
        Configuration config;
        config.name = string_field(entry, "name", cw);
        for_each_element(entry, "directories", Presence::required, cw,
                         [&](const json &dir, const Where &dw) {
                           config.directories.push_back(read_directory(dir, dw, model));
                         });
        for_each_element(entry, "targets", Presence::required, cw,
                         [&](const json &target, const Where &tw) {
                           config.targets.push_back(read_target(reply_dir, target, model, tw));
                         });
        model.configurations.push_back(std::move(config));
      });
}

void read_toolchains(const json &object, const Where &w, CodeModel &model) {
  for_each_element(
      object, "toolchains", Presence::required, w, [&](const json &entry, const Where &cw) {
        Compiler c;
        c.language = string_field(entry, "language", cw);
        const json &compiler = require(entry, "compiler", json::value_t::object, cw);
        if (const json *path =
                optional(compiler, "path", json::value_t::string, cw.at("compiler"))) {
          c.path = path->get<std::string>();
        }
        if (const json *id = optional(compiler, "id", json::value_t::string, cw.at("compiler"))) {
          c.id = id->get<std::string>();
        }
        if (const json *v =
                optional(compiler, "version", json::value_t::string, cw.at("compiler"))) {
          c.version = v->get<std::string>();
        }
        model.compilers.push_back(c);
      });
}

void read_cache(const json &object, const Where &w, CodeModel &model) {
  for_each_element(
      object, "entries", Presence::required, w, [&](const json &entry, const Where &ew) {
        model.cache[string_field(entry, "name", ew)] = string_field(entry, "value", ew);
      });
}

fs::path newest_index(const fs::path &reply_dir) {
  fs::path newest;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(reply_dir, ec)) {
    std::string name = entry.path().filename().string();
    // cmake's rule: the index with the lexicographically largest name is the current one.
    if (name.rfind("index-", 0) == 0 && entry.path().extension() == ".json" &&
        (newest.empty() || name > newest.filename().string())) {
      newest = entry.path();
    }
  }
  return newest;
}

} // namespace

const Compiler *CodeModel::compiler(const std::string &language) const {
  for (const auto &c : compilers) {
    if (c.language == language) {
      return &c;
    }
  }
  return nullptr;
}

std::string query_text() {
  return json{{"requests",
               {{{"kind", "codemodel"}, {"version", 2}},
                {{"kind", "toolchains"}, {"version", 1}},
                {{"kind", "cache"}, {"version", 2}}}}}
             .dump(2) +
         "\n";
}

fs::path query_file(const fs::path &build_dir) {
  return build_dir / ".cmake" / "api" / "v1" / "query" / "client-kopt" / "query.json";
}

CodeModel read_reply(const fs::path &build_dir) {
  fs::path reply_dir = build_dir / ".cmake" / "api" / "v1" / "reply";
  fs::path index_path = newest_index(reply_dir);
  if (index_path.empty()) {
    throw Error(reply_dir.string() + ": no reply index (cmake has not answered the query)");
  }
  json index = util::read_json(index_path);
  Where iw{index_path.string(), ""};
  CodeModel model;
  model.index_file = index_path;
  const json &cmake = require(index, "cmake", json::value_t::object, iw);
  if (const json *generator = optional(cmake, "generator", json::value_t::object, iw.at("cmake"))) {
    model.generator = string_field(*generator, "name", iw.at("cmake.generator"));
    if (const json *multi =
            optional(*generator, "multiConfig", json::value_t::boolean, iw.at("cmake.generator"))) {
      model.multi_config = multi->get<bool>();
    }
  }
  const json &reply = require(index, "reply", json::value_t::object, iw);
  Where cw = iw.at("reply").at("client-kopt");
  const json &client = require(reply, "client-kopt", json::value_t::object, iw.at("reply"));
  Where qw = cw.at("query.json");
  const json &answer = require(client, "query.json", json::value_t::object, cw);
  check_error(answer, qw);
  if (answer.contains("responses")) { // a malformed query is answered here
    check_error(answer["responses"], qw.at("responses"));
  }
  const json &responses = require(answer, "responses", json::value_t::array, qw);
  bool have_codemodel = false;
  for (size_t i = 0; i < responses.size(); ++i) {
    Where rw = qw.at("responses").at(i);
    check_error(responses[i], rw);
    std::string kind = string_field(responses[i], "kind", rw);
    const json &version = require(responses[i], "version", json::value_t::object, rw);
    size_t major = index_field(version, "major", rw.at("version"));
    size_t minor = index_field(version, "minor", rw.at("version"));
    std::string file = string_field(responses[i], "jsonFile", rw);
    json object = read_referenced(reply_dir, file, iw);
    Where ow{(reply_dir / file).string(), ""};
    if (kind == "codemodel" && major == 2) {
      model.codemodel_minor = static_cast<int>(minor);
      read_codemodel(reply_dir, object, ow, model);
      have_codemodel = true;
    } else if (kind == "toolchains" && major == 1) {
      read_toolchains(object, ow, model);
    } else if (kind == "cache" && major == 2) {
      read_cache(object, ow, model);
    }
  }
  if (!have_codemodel) {
    qw.fail("no codemodel v2 response");
  }
  return model;
}

std::string cache_value(const fs::path &build_dir, const std::string &name) {
  std::error_code ec;
  if (!fs::exists(build_dir / "CMakeCache.txt", ec)) {
    return "";
  }
  std::istringstream in(util::read_file(build_dir / "CMakeCache.txt"));
  std::string line;
  while (std::getline(in, line)) {
    // NAME:TYPE=VALUE; comments start with # or //.
    size_t colon = line.find(':');
    size_t equals = line.find('=');
    if (colon != std::string::npos && equals != std::string::npos && colon < equals &&
        line.compare(0, colon, name) == 0 && colon == name.size()) {
      return line.substr(equals + 1);
    }
  }
  return "";
}

CodeModel load(const fs::path &build_dir_arg, util::ProcessRunner &runner, std::ostream &notes) {
  fs::path build_dir = fs::absolute(build_dir_arg).lexically_normal();
  std::error_code ec;
  if (!fs::exists(build_dir / "CMakeCache.txt", ec)) {
    throw Error(build_dir.string() +
                ": not a CMake build tree (no CMakeCache.txt); configure it with cmake first");
  }
  fs::path query = query_file(build_dir);
  util::write_file_if_changed(query, query_text());
  fs::path reply_dir = build_dir / ".cmake" / "api" / "v1" / "reply";
  fs::path index = newest_index(reply_dir);
  std::string why;
  if (index.empty()) {
    why = "the tree has no File API reply yet";
  } else if (fs::last_write_time(index) < fs::last_write_time(query)) {
    why = "its newest reply is older than kopt's query";
  } else {
    json parsed = util::read_json(index);
    if (!parsed.contains("reply") || !parsed["reply"].contains("client-kopt")) {
      why = "its newest reply does not answer kopt's query";
    }
  }
  if (!why.empty()) {
    // The tree's own cmake: the one on PATH may be another version, or missing.
    std::string cmake = cache_value(build_dir, "CMAKE_COMMAND");
    if (cmake.empty()) {
      cmake = "cmake";
    }
    notes << "kopt import: running `" << cmake << " " << build_dir.string()
          << "` to answer kopt's File API query (" << why << ")\n";
    util::Command command{{cmake, build_dir.string()}, {}, {}, 600};
    util::ProcessResult result = runner.run(command);
    if (!result.ok()) {
      throw Error("`" + cmake + " " + build_dir.string() + "` " + result.describe(600) +
                  " while answering kopt's File API query:\n" + result.err + result.out);
    }
  }
  // A concurrent cmake run replaces the reply files: read the new index then.
  for (int attempt = 1;; ++attempt) {
    try {
      return read_reply(build_dir);
    } catch (const ReplyVanished &vanished) {
      if (attempt == 3) {
        throw Error(std::string(vanished.what()) + " (is cmake re-running on the tree?)");
      }
    }
  }
}

} // namespace kopt::fileapi
