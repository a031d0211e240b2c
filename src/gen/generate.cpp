#include "gen/generate.hpp"

#include "gen/shape_capture_text.hpp"
#include "gen/text_template.hpp"
#include "gen/tuned.hpp"
#include "util/atomic_file.hpp"
#include "util/cmake_text.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace kopt::gen {

namespace fs = std::filesystem;

namespace {

std::string symbol_of(const std::string &instance) { return "kopt_instance_" + instance; }

// The family's instance template expanded for one instance, ending in a newline unless empty.
std::string instance_body(const spec::Family &family, const spec::Instance &instance,
                          const std::string &template_text, const std::string &template_source) {
  TemplateValues values = {{"name", instance.name},
                           {"symbol", symbol_of(instance.name)},
                           {"header", "../src/" + family.kernel_header}};
  for (const auto &p : family.parameters) {
    values.emplace_back(p, instance.params.at(p));
  }
  std::string body = expand_template(template_text, values, template_source);
  if (!body.empty() && body.back() != '\n') {
    body += '\n';
  }
  return body;
}

// The C++ text of one instance TU: a banner, the expanded template, then a check of its signature.
std::string instance_tu(const spec::Family &family, const spec::Instance &instance,
                        const std::string &body) {
  return expand_builtin("instance.cpp.in", {{"body", body},
                                            {"symbol", symbol_of(instance.name)},
                                            {"signature", family.kernel_signature}});
}

std::string manifest_h(const spec::Family &family) {
  std::vector<std::string> quoted;
  for (const auto &column : family.dispatch) {
    quoted.push_back("\"" + column + "\"");
  }
  return expand_builtin("manifest.h.in",
                        {{"types_include", family.types_include()},
                         {"signature", family.kernel_signature},
                         {"dispatch_dims", std::to_string(family.dispatch.size())},
                         {"dispatch_columns", "{" + util::join(quoted, ", ") + "}"},
                         {"impl", family.impl},
                         {"warmup", std::to_string(family.warmup)},
                         {"repeat", std::to_string(family.repeat)}});
}

std::string registry_cpp(const spec::Family &family, const std::vector<std::string> &compiled) {
  std::vector<std::string> declarations;
  std::vector<std::string> entries;
  for (const auto &name : compiled) {
    declarations.push_back("kopt_generated::KernelFn " + symbol_of(name) + ";");
    entries.push_back("    {\"" + name + "\", &::" + symbol_of(name) + "},");
  }
  return expand_builtin("registry.cpp.in", {{"family", family.name},
                                            {"declarations", util::join(declarations, "\n")},
                                            {"entries", util::join(entries, "\n")}});
}

size_t line_count(const std::string &text) {
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return !text.empty() && text.back() != '\n' ? lines + 1 : lines;
}

// Where a generated copy came from, for the compile launcher to name the user's file in
// diagnostics: a copied source line for line; an instance TU's template lines, when the
// expansion kept them (one line of banner first).
nlohmann::json source_origin(const fs::path &file) { return {{"file", file.string()}}; }

nlohmann::json template_origin(const fs::path &file, const std::string &template_text,
                               const std::string &body) {
  size_t lines = line_count(template_text);
  if (line_count(body) != lines) {
    return nullptr; // a placeholder's value spans lines: the lines no longer correspond
  }
  const std::string &tu = builtin_template("instance.cpp.in");
  auto banner = static_cast<size_t>(std::count(tu.begin(), tu.begin() + tu.find("{{body}}"), '\n'));
  return {{"file", file.string()},
          {"first_line", banner + 1},
          {"last_line", banner + lines},
          {"line_offset", -static_cast<int>(banner)}};
}

size_t column_index(const spec::Family &family, const std::string &column) {
  return static_cast<size_t>(std::find(family.dispatch.begin(), family.dispatch.end(), column) -
                             family.dispatch.begin());
}

// Shape capture (KOPT_CAPTURE) is made during static initialisation, so that with it off a
// dispatch pays one load and a branch (bench/capture); dispatches made before then (from other
// static initialisers) are not captured.
std::string dispatch_cpp(const spec::Family &family, const std::vector<std::string> &compiled,
                         const std::vector<TunedRow> &tuned) {
  auto index_of = [&](const std::string &name) {
    return std::to_string(std::lower_bound(compiled.begin(), compiled.end(), name) -
                          compiled.begin());
  };
  std::vector<std::string> tuned_rows;
  for (const auto &row : tuned) {
    tuned_rows.push_back("    {" + std::to_string(row.m) + ", " + std::to_string(row.n) + ", " +
                         std::to_string(row.k) + ", " + index_of(row.kernel) + "}, // " +
                         row.kernel + " (line " + std::to_string(row.line) + ")");
  }
  std::string rules;
  if (!family.heuristic.empty()) {
    rules = heuristic::emit_cpp(family.heuristic, family.dispatch);
    rules.pop_back(); // the template ends the last line
  }
  return expand_builtin("dispatch.cpp.in", {{"family", family.name},
                                            {"tuned_rows", util::join(tuned_rows, "\n")},
                                            {"heuristic_rules", rules},
                                            {"m_column", std::to_string(column_index(family, "M"))},
                                            {"n_column", std::to_string(column_index(family, "N"))},
                                            {"k_column", std::to_string(column_index(family, "K"))},
                                            {"default_index", index_of(family.default_kernel)},
                                            {"default_kernel", family.default_kernel}});
}

std::vector<std::string> compiled_set(const spec::Family &family,
                                      const std::vector<TunedRow> &tuned) {
  std::set<std::string> names;
  if (family.compile == spec::Compile::all) {
    for (const auto &instance : family.instances) {
      names.insert(instance.name);
    }
  } else {
    for (const auto &row : tuned) {
      names.insert(row.kernel);
    }
  }
  // The heuristic set and the default are compiled in every build, whatever the tuned table.
  for (const auto &name : family.heuristic.kernels()) {
    names.insert(name);
  }
  names.insert(family.default_kernel);
  return {names.begin(), names.end()};
}

// Deletes files under dir/sub that this run did not generate (an instance dropped from the
// compiled set must not linger and be globbed into a build).
void remove_stale(const fs::path &dir, const std::string &sub,
                  const std::map<std::string, std::string> &files, std::vector<fs::path> &removed) {
  if (!fs::is_directory(dir / sub)) {
    return;
  }
  std::vector<fs::path> stale;
  for (const auto &entry : fs::recursive_directory_iterator(dir / sub)) {
    if (entry.is_regular_file() &&
        !files.count(entry.path().lexically_relative(dir).generic_string())) {
      stale.push_back(entry.path());
    }
  }
  std::sort(stale.begin(), stale.end());
  for (const auto &path : stale) {
    fs::remove(path);
    removed.push_back(path);
  }
}

std::string cmake_list(const std::vector<fs::path> &paths) {
  std::vector<std::string> items;
  for (const auto &p : paths) {
    items.push_back(p.string());
  }
  return util::cmake_quote_list(items);
}

// The tuned table's rows (none without one); a row naming a kernel that is not an instance is
// an error naming the table's line.
std::vector<TunedRow> read_tuned(const spec::Family &family, std::vector<std::string> &warnings) {
  std::vector<TunedRow> tuned;
  if (!family.tuned.empty()) {
    tuned = read_tuned_table(family.tuned, family.arch, warnings);
  }
  for (const auto &row : tuned) {
    if (!family.find_instance(row.kernel)) {
      throw Error(family.tuned.string() + ":" + std::to_string(row.line) + ": kernelName: '" +
                  row.kernel + "' is not a compiled instance of family '" + family.name + "'");
    }
  }
  return tuned;
}

// A candidate's generated files before they are written: relative path -> content (std::map
// keeps every list sorted), and where each source and instance TU came from.
struct CandidateFiles {
  std::map<std::string, std::string> files;
  nlohmann::json origins = nlohmann::json::object();
};

// The candidate's editable sources, copied under src/.
void add_sources(const std::map<std::string, fs::path> &sources, CandidateFiles &out) {
  for (const auto &[name, path] : sources) {
    out.files["src/" + name] = util::read_file(path);
  }
  for (const auto &[name, path] : sources) {
    out.origins["src/" + name] = source_origin(path);
  }
}

// One TU per compiled instance, from the family's template or the instance's own override.
void add_instances(const spec::Family &family, const std::vector<std::string> &compiled,
                   const fs::path &template_path, const std::map<std::string, fs::path> &overrides,
                   CandidateFiles &out) {
  std::string template_text = util::read_file(template_path);
  for (const auto &name : compiled) {
    auto own = overrides.find(name);
    const bool overridden = own != overrides.end();
    const fs::path &source = overridden ? own->second : template_path;
    const std::string text = overridden ? util::read_file(own->second) : template_text;
    const spec::Instance &instance = *family.find_instance(name);
    std::string body = instance_body(family, instance, text, source.string());
    nlohmann::json origin = template_origin(source, text, body);
    std::string tu = instance_tu(family, instance, body);
    if (!origin.is_null()) {
      out.origins["instances/" + name + ".cpp"] = origin;
    }
    out.files["instances/" + name + ".cpp"] = std::move(tu);
  }
}

// The manifest, registry, dispatch, capture header and hash beside the instances.
void add_support_files(const spec::Family &family, const Generated &g,
                       const std::vector<TunedRow> &tuned, CandidateFiles &out) {
  out.files["kopt_manifest.h"] = manifest_h(family);
  out.files["kopt_registry.cpp"] = registry_cpp(family, g.compiled);
  out.files["kopt_dispatch.cpp"] = dispatch_cpp(family, g.compiled, tuned);
  out.files["kopt_capture.h"] = shape_capture_header();
  out.files["kopt_hash.txt"] = g.hash + "\n";
}

// manifest.json: what was generated, from what, and every file listed (docs/FORMATS.md).
std::string manifest_json(const spec::Family &family, const Generated &g,
                          const std::vector<TunedRow> &tuned, const CandidateFiles &out) {
  std::set<std::string> tuned_kernels;
  for (const auto &row : tuned) {
    tuned_kernels.insert(row.kernel);
  }
  std::vector<std::string> listed;
  for (const auto &[relative, content] : out.files) {
    listed.push_back(relative);
  }
  nlohmann::json manifest = {
      {"family", family.name},
      {"candidate", g.candidate},
      {"base", g.base},
      {"target", g.target},
      {"hash", g.hash},
      {"compile", family.compile == spec::Compile::all ? "all" : "dispatch"},
      {"compiled", g.compiled},
      {"heuristic", family.heuristic.kernels()},
      {"default", family.default_kernel},
      {"tuned", std::vector<std::string>(tuned_kernels.begin(), tuned_kernels.end())},
      {"files", listed},
      {"sources", out.origins}};
  return util::dump_json(manifest) + "\n";
}

// Writes the files whose content changed, lists the TUs in compile order and deletes what an
// earlier run generated and this one did not.
void write_files(const spec::Family &family, const std::map<std::string, std::string> &files,
                 Generated &g) {
  for (const auto &[relative, content] : files) {
    fs::path path = g.dir / relative;
    g.outputs.push_back(path);
    if (util::write_file_if_changed(path, content)) {
      g.written.push_back(path);
    }
  }
  // Ninja starts ready compiles in the order their targets list them: instances in family.json
  // order (heaviest first, if the family lists them so, shortens a cold build's tail), then the
  // small registry and dispatch.
  for (const auto &instance : family.instances) {
    if (std::binary_search(g.compiled.begin(), g.compiled.end(), instance.name)) {
      g.sources.push_back(g.dir / "instances" / (instance.name + ".cpp"));
    }
  }
  g.sources.push_back(g.dir / "kopt_registry.cpp");
  g.sources.push_back(g.dir / "kopt_dispatch.cpp");
  remove_stale(g.dir, "instances", files, g.removed);
  remove_stale(g.dir, "src", files, g.removed);
}

// The tuned table and the heuristic file, when the family has them.
void insert_tables(const spec::Family &family, std::set<fs::path> &into) {
  for (const auto &extra : {family.tuned, family.heuristic_file}) {
    if (!extra.empty()) {
      into.insert(extra);
    }
  }
}

// The files the output depends on (re-running gen-instances when one changes).
std::vector<fs::path> inputs_of(const spec::Family &family,
                                const std::map<std::string, fs::path> &sources,
                                const std::map<std::string, fs::path> &overrides) {
  std::set<fs::path> inputs = {family.file};
  for (const auto &[name, path] : sources) {
    inputs.insert(path);
  }
  for (const auto &[name, path] : overrides) {
    inputs.insert(path);
  }
  insert_tables(family, inputs);
  return {inputs.begin(), inputs.end()};
}

// The files whose change changes the build's shape: CMake re-configures when one changes.
std::vector<fs::path> configure_inputs_of(const spec::Family &family,
                                          const candidate::CandidateSet &set, const std::string &id,
                                          const fs::path &template_path,
                                          const std::map<std::string, fs::path> &overrides) {
  std::set<fs::path> configure = {family.file, family.configs, template_path};
  for (const candidate::Candidate *c : set.chain(id)) {
    configure.insert(c->dir / "candidate.json");
  }
  for (const auto &[name, path] : overrides) {
    configure.insert(path);
  }
  insert_tables(family, configure);
  return {configure.begin(), configure.end()};
}

} // namespace

Generated generate_candidate(const spec::Family &family, const candidate::CandidateSet &set,
                             const std::string &id, const fs::path &out_root) {
  const candidate::Candidate &candidate = set.get(id);
  Generated g;
  g.candidate = id;
  g.base = candidate.spec.base;
  g.target = candidate.spec.target;
  g.dir = fs::absolute(out_root / id).lexically_normal();
  std::map<std::string, fs::path> sources = set.resolve_sources(family, id);
  g.hash = set.content_hash(family, id);
  std::vector<TunedRow> tuned = read_tuned(family, g.warnings);
  g.compiled = compiled_set(family, tuned);

  const fs::path &template_path = sources.at(family.kernel_template);
  std::map<std::string, fs::path> overrides = set.resolve_instance_templates(family, id);
  CandidateFiles out;
  add_sources(sources, out);
  add_instances(family, g.compiled, template_path, overrides, out);
  add_support_files(family, g, tuned, out);
  out.files["manifest.json"] = manifest_json(family, g, tuned, out);
  write_files(family, out.files, g);

  g.inputs = inputs_of(family, sources, overrides);
  g.configure_inputs = configure_inputs_of(family, set, id, template_path, overrides);
  return g;
}

void write_cmake_fragment(const spec::Family &family, const std::vector<Generated> &generated,
                          const fs::path &file) {
  std::vector<const Generated *> sorted;
  for (const auto &g : generated) {
    sorted.push_back(&g);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Generated *a, const Generated *b) { return a->candidate < b->candidate; });
  std::string prefix = "KOPT_" + family.name + "_";
  std::vector<std::string> ids;
  std::string baseline;
  for (const Generated *g : sorted) {
    ids.push_back(g->candidate);
    if (g->base.empty() && baseline.empty()) {
      baseline = g->candidate;
    }
  }
  std::set<fs::path> configure;
  for (const Generated *g : sorted) {
    configure.insert(g->configure_inputs.begin(), g->configure_inputs.end());
  }
  std::vector<std::string> blocks;
  for (const Generated *g : sorted) {
    blocks.push_back(expand_builtin("targets_candidate.cmake.in",
                                    {{"family", family.name},
                                     {"candidate", g->candidate},
                                     {"dir", util::cmake_quote(g->dir.string())},
                                     {"sources", cmake_list(g->sources)},
                                     {"inputs", cmake_list(g->inputs)},
                                     {"outputs", cmake_list(g->outputs)},
                                     {"hash", util::cmake_quote(g->hash)},
                                     {"base", util::cmake_quote(g->base)},
                                     {"target", util::cmake_quote(g->target)},
                                     {"compiled", util::cmake_quote_list(g->compiled)}}));
    blocks.back().pop_back(); // the blocks are joined by blank lines
  }
  std::string out = expand_builtin(
      "targets.cmake.in",
      {{"family", family.name},
       {"spec_file", family.file.string()},
       {"spec", util::cmake_quote(family.file.string())},
       {"candidates", util::cmake_quote_list(ids)},
       {"candidates_dir", util::cmake_quote(family.candidates_dir.string())},
       {"baseline", util::cmake_quote(baseline)},
       {"backend", util::cmake_quote(spec::to_string(family.backend))},
       {"impl", util::cmake_quote(family.impl)},
       {"harness", util::cmake_quote(family.harness.string())},
       {"configs", util::cmake_quote(family.configs.string())},
       {"timeout", util::cmake_quote(util::format_number(family.timeout_s, 15))},
       {"warmup", util::cmake_quote(std::to_string(family.warmup))},
       {"repeat", util::cmake_quote(std::to_string(family.repeat))},
       {"kernel_regex", util::cmake_quote(family.kernel_regex)},
       {"dispatch", util::cmake_quote_list(family.dispatch)},
       {"app_sources", cmake_list(family.app ? family.app->sources : std::vector<fs::path>{})},
       {"configure_depends", cmake_list(std::vector<fs::path>(configure.begin(), configure.end()))},
       {"candidate_blocks", util::join(blocks, "\n\n")}});
  util::write_file_if_changed(file, out);
}

} // namespace kopt::gen
