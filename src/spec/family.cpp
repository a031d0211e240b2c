#include "spec/family.hpp"

#include "spec/fields.hpp"
#include "util/csv.hpp"
#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <set>

namespace kopt::spec {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFamilyFields = {"name",         "backend",    "impl",
                                                "kernel",       "parameters", "instances",
                                                "default",      "heuristic",  "tuned",
                                                "arch",         "compile",    "dispatch",
                                                "configs",      "classes",    "harness",
                                                "kernel_regex", "editable",   "candidates",
                                                "timeout_s",    "bench",      "compile_budget_s",
                                                "keep",         "app",        "roofline"};

// family.json's spellings of the backends, for reading and for writing.
constexpr util::EnumName<Backend> kBackends[] = {
    {Backend::host, "host"}, {Backend::cuda, "cuda"}, {Backend::hip, "hip"}};

using util::is_identifier;

// The longest family or instance name: each names a file or folder (at most 255 bytes on the
// common file systems), with room for a prefix and an extension.
constexpr size_t kMaxName = 200;

// [a-z][a-z0-9_]*: a family name, which names folders and CMake targets.
bool is_family_name(const std::string &text) {
  return is_identifier(text) && text[0] >= 'a' && text[0] <= 'z' &&
         std::none_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// A path in family.json: relative to the family folder, made absolute and normal.
fs::path family_path(const fs::path &dir, const std::string &relative) {
  return (dir / relative).lexically_normal();
}

// Checks that a file the family names exists.
fs::path existing_file(const Fields &fields, const std::string &key, const fs::path &dir) {
  fs::path path = family_path(dir, fields.string(key));
  std::error_code ec; // a name too long for the file system is not found, not a crash
  if (!fs::is_regular_file(path, ec)) {
    std::string why = util::why_not_regular(path);
    throw Error(fields.where(key) + ": " +
                (why.starts_with("is ") ? util::excerpt(path.string(), 200) + ": " + why
                                        : "file not found: " + util::excerpt(path.string(), 200)));
  }
  return path;
}

// A relative path inside the candidate / family folder: no absolute paths, no "..".
void check_relative(const std::string &where, const std::string &path) {
  fs::path p(path);
  bool escapes = path.empty() || p.is_absolute();
  for (const auto &part : p) {
    escapes = escapes || part == "..";
  }
  if (escapes) {
    throw Error(where + ": expected a relative path inside the family folder, got '" + path + "'");
  }
}

// The text of one parameter value: numbers as JSON writes them, strings as they are.
std::string parameter_text(const nlohmann::json &value, const std::string &where) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number()) {
    return util::dump_json(value, -1);
  }
  fail_expected(where, "a number or string", value);
}

// Replaces {P} in the name pattern by each parameter's value.
std::string instance_name(const std::string &pattern, const Instance &instance,
                          const std::string &where) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string::npos) {
      throw Error(where + ": unterminated '{' in name pattern '" + pattern + "'");
    }
    std::string key = pattern.substr(i + 1, close - i - 1);
    auto it = instance.params.find(key);
    if (it == instance.params.end()) {
      throw Error(where + ": unknown parameter '{" + key + "}' in name pattern '" + pattern + "'");
    }
    out += it->second;
    i = close;
  }
  return out;
}

void load_kernel(Family &f, const Fields &top) {
  Fields kernel(top.required("kernel"), top.file(), "kernel");
  kernel.reject_unknown({"header", "types", "signature", "template", "name"});
  f.kernel_header = kernel.string("header");
  f.kernel_types = kernel.string_or("types", "");
  f.kernel_signature = kernel.string("signature");
  f.kernel_template = kernel.string("template");
  f.kernel_name = kernel.string("name");
  check_relative(kernel.where("header"), f.kernel_header);
  if (!f.kernel_types.empty()) {
    check_relative(kernel.where("types"), f.kernel_types);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(family_path(f.dir, f.kernel_types), ec)) {
      throw Error(kernel.where("types") + ": '" + f.kernel_types + "' is no file in " +
                  f.dir.string() + " (expected the header declaring the signature's types)");
    }
  }
  check_relative(kernel.where("template"), f.kernel_template);
  if (f.kernel_signature.find('(') == std::string::npos) {
    throw Error(kernel.where("signature") + ": expected a C++ function type like " +
                "'void(const Args&)', got '" + util::excerpt(f.kernel_signature) + "'");
  }
}

void load_instances(Family &f, const Fields &top) {
  f.parameters = top.strings("parameters");
  for (size_t i = 0; i < f.parameters.size(); ++i) {
    std::string where = top.where("parameters") + "[" + std::to_string(i) + "]";
    const std::string &p = f.parameters[i];
    if (!is_identifier(p) || p == "name" || p == "symbol" || p == "header") {
      throw Error(where + ": expected an identifier other than name, symbol and header, got '" +
                  util::excerpt(p) + "'");
    }
    if (std::count(f.parameters.begin(), f.parameters.end(), p) > 1) {
      throw Error(where + ": parameter '" + p + "' is listed twice");
    }
  }
  const auto &list = top.required("instances");
  if (!list.is_array() || list.empty()) {
    fail_expected(top.where("instances"), "a non-empty array of objects", list);
  }
  std::vector<std::string> known = f.parameters;
  known.push_back("name");
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    Fields fields(list[i], top.file(), "instances[" + std::to_string(i) + "]");
    fields.reject_unknown(known);
    Instance instance;
    for (const auto &p : f.parameters) {
      instance.params[p] = parameter_text(fields.required(p), fields.where(p));
    }
    instance.name = fields.has("name") ? fields.string("name")
                                       : instance_name(f.kernel_name, instance, fields.where());
    if (!is_identifier(instance.name)) {
      throw Error(fields.where() + ": instance name '" + util::excerpt(instance.name) +
                  "' is not a C++ identifier");
    }
    if (instance.name.size() > kMaxName) {
      throw Error(fields.where() + ": instance name '" + util::excerpt(instance.name) +
                  "' is longer than " + std::to_string(kMaxName) + " characters (it names a file)");
    }
    auto [it, fresh] = seen.emplace(instance.name, i);
    if (!fresh) {
      throw Error(fields.where() + ": duplicate instance name '" + util::excerpt(instance.name) +
                  "' (also instances[" + std::to_string(it->second) + "])");
    }
    f.instances.push_back(std::move(instance));
  }
}

// Throws unless `kernel` names an instance; the hint points at the nearest name.
void check_instance(const Family &f, const std::string &where, const std::string &kernel) {
  if (f.find_instance(kernel)) {
    return;
  }
  std::vector<std::string> names;
  for (const auto &instance : f.instances) {
    names.push_back(instance.name);
  }
  std::string hint = util::nearest(kernel, names);
  throw Error(where + ": '" + kernel + "' is not an instance of family '" + f.name + "'" +
              (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
}

void load_heuristic(Family &f, const Fields &top) {
  if (!top.has("heuristic")) {
    return;
  }
  const auto &value = top.json().at("heuristic");
  std::string where = top.where("heuristic");
  if (value.is_string()) {
    f.heuristic_file = existing_file(top, "heuristic", f.dir);
    where = f.heuristic_file.string();
    f.heuristic = heuristic::parse_rules(util::read_json(f.heuristic_file), f.dispatch, where);
  } else if (value.is_object()) {
    f.heuristic = heuristic::parse_rules(value, f.dispatch, where);
  } else {
    fail_expected(where, "a rule list object or a path to a JSON file", value);
  }
  for (size_t i = 0; i < f.heuristic.rules.size(); ++i) {
    check_instance(f, where + ": rules[" + std::to_string(i) + "].kernel",
                   f.heuristic.rules[i].kernel);
  }
}

void load_classes(Family &f, const Fields &top) {
  Fields classes(top.required("classes"), top.file(), "classes");
  classes.reject_unknown({"columns", "buckets"});
  f.classes.columns = classes.strings("columns");
  if (f.classes.columns.empty()) {
    throw Error(classes.where("columns") + ": expected at least one config column");
  }
  for (size_t i = 0; i < f.classes.columns.size(); ++i) {
    const std::string &column = f.classes.columns[i];
    if (std::find(f.classes.columns.begin(), f.classes.columns.begin() + i, column) !=
        f.classes.columns.begin() + i) {
      throw Error(classes.where("columns") + "[" + std::to_string(i) + "]: column '" +
                  util::excerpt(column) + "' is listed twice");
    }
  }
  if (!classes.has("buckets")) {
    return;
  }
  Fields buckets(classes.json().at("buckets"), top.file(), "classes.buckets");
  buckets.reject_unknown(f.classes.columns);
  for (const auto &[column, edges] : buckets.json().items()) {
    if (!edges.is_array() || edges.empty()) {
      fail_expected(buckets.where(column), "a non-empty array of increasing numbers", edges);
    }
    std::vector<double> values;
    for (size_t i = 0; i < edges.size(); ++i) {
      if (!edges[i].is_number()) {
        fail_expected(buckets.where(column) + "[" + std::to_string(i) + "]", "a number", edges[i]);
      }
      values.push_back(edges[i].get<double>());
      if (i > 0 && values[i] <= values[i - 1]) {
        throw Error(buckets.where(column) + "[" + std::to_string(i) +
                    "]: expected edges in increasing order, got " + util::dump_json(edges[i], -1) +
                    " after " + util::dump_json(edges[i - 1], -1));
      }
    }
    f.classes.buckets[column] = std::move(values);
  }
}

// Why one configs value is unfit for its column, or "": no control bytes anywhere, integers in
// the dispatch columns (the harness reads them with get_int, the dispatch as int64), numbers in
// the bucketed class columns.
std::string config_value_problem(const std::string &value, bool integer, bool number) {
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      return std::string("expected no control bytes, got byte ") + hex;
    }
  }
  std::string text(util::trim(value)); // the harness drops blanks around a field too
  const char *end = text.data() + text.size();
  if (integer) {
    int64_t parsed = 0;
    auto [stop, ec] = std::from_chars(text.data(), end, parsed);
    if (text.empty() || ec != std::errc() || stop != end) {
      return "expected an integer, got '" + util::excerpt(text) + "'";
    }
  } else if (number) {
    double parsed = 0;
    auto [stop, ec] = std::from_chars(text.data(), end, parsed);
    if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(parsed)) {
      return "expected a number, got '" + util::excerpt(text) + "'";
    }
  }
  return "";
}

// The configs CSV must hold every dispatch and class column, each value fit for its column and
// each config once: checked here, at configure time, rather than in the harness's log later.
void check_configs(const Family &f, const Fields &top) {
  util::CsvTable table = util::read_csv(f.configs);
  auto require = [&](const std::string &column, const char *role) {
    if (table.find_column(column) < 0) {
      throw Error(top.where("configs") + ": " + f.configs.string() + " lacks " + role +
                  " column '" + column + "' (columns: " + util::join(table.header, ", ") + ")");
    }
  };
  for (const auto &column : f.dispatch) {
    require(column, "dispatch");
  }
  for (const auto &column : f.classes.columns) {
    require(column, "class");
  }
  std::string file = f.configs.string();
  if (table.rows.empty()) {
    throw Error(file + ": no configs after the header");
  }
  for (size_t c = 0; c < table.header.size(); ++c) {
    std::string problem = config_value_problem(table.header[c], false, false);
    if (!problem.empty() || table.find_column(table.header[c]) != static_cast<int>(c)) {
      throw Error(file + ":1:" + std::to_string(c + 1) + ": column name '" +
                  util::excerpt(table.header[c]) +
                  "': " + (problem.empty() ? std::string("a duplicate") : problem));
    }
  }
  std::map<std::string, int> seen; // a config's key -> its line: each config runs once
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto &row = table.rows[r];
    std::string key;
    for (size_t c = 0; c < row.size() && c < table.header.size(); ++c) {
      const std::string &column = table.header[c];
      bool integer = std::find(f.dispatch.begin(), f.dispatch.end(), column) != f.dispatch.end();
      bool number = f.classes.buckets.count(column) > 0;
      std::string problem = config_value_problem(row[c], integer, number);
      if (!problem.empty()) {
        throw Error(table.where(r) + ":" + std::to_string(c + 1) + ": column '" + column +
                    "': " + problem);
      }
      key += (c ? "," : "") + column + "=" + std::string(util::trim(row[c]));
    }
    auto [first, fresh] = seen.emplace(key, table.lines[r]);
    if (!fresh) {
      throw Error(table.where(r) + ": duplicate config " + util::excerpt(key) + " (first on line " +
                  std::to_string(first->second) + ")");
    }
  }
}

// name, backend and impl: what the family is called and runs on.
void load_identity(Family &f, const Fields &top) {
  f.name = top.string("name");
  if (!is_family_name(f.name)) {
    throw Error(top.where("name") + ": expected [a-z][a-z0-9_]*, got '" + util::excerpt(f.name) +
                "'");
  }
  if (f.name.size() > kMaxName) {
    throw Error(top.where("name") + ": expected at most " + std::to_string(kMaxName) +
                " characters (it names folders and targets), got " + std::to_string(f.name.size()));
  }
  std::string backend = top.string("backend");
  const Backend *known = util::value_named(kBackends, backend);
  if (known == nullptr) {
    throw Error(top.where("backend") + ": expected one of host, cuda, hip, got '" + backend + "'");
  }
  f.backend = *known;
  f.impl = top.string_or("impl", f.name);
  if (!is_identifier(f.impl)) {
    throw Error(top.where("impl") + ": expected an identifier, got '" + util::excerpt(f.impl) +
                "'");
  }
}

// dispatch: the config columns the dispatch keys on, each once.
void load_dispatch(Family &f, const Fields &top) {
  f.dispatch = top.strings("dispatch");
  if (f.dispatch.empty()) {
    throw Error(top.where("dispatch") + ": expected at least one config column");
  }
  for (size_t i = 0; i < f.dispatch.size(); ++i) {
    if (std::count(f.dispatch.begin(), f.dispatch.end(), f.dispatch[i]) > 1) {
      throw Error(top.where("dispatch") + "[" + std::to_string(i) + "]: column '" + f.dispatch[i] +
                  "' is listed twice");
    }
  }
}

// tuned (which needs M, N and K to dispatch on), arch and compile.
void load_build_options(Family &f, const Fields &top) {
  if (top.has("tuned")) {
    f.tuned = existing_file(top, "tuned", f.dir);
    for (const char *column : {"M", "N", "K"}) {
      if (std::find(f.dispatch.begin(), f.dispatch.end(), column) == f.dispatch.end()) {
        throw Error(top.where("tuned") + ": a tuned table needs dispatch columns M, N and K, " +
                    "got " + util::join(f.dispatch, ", "));
      }
    }
  }
  f.arch = top.string_or("arch", "");

  std::string compile = top.string_or("compile", "all");
  if (compile == "all") {
    f.compile = Compile::all;
  } else if (compile == "dispatch") {
    f.compile = Compile::dispatch;
  } else {
    throw Error(top.where("compile") + ": expected one of all, dispatch, got '" + compile + "'");
  }
}

// kernel_regex, editable (holding the kernel header) and the candidates folder.
void load_sources(Family &f, const Fields &top) {
  f.kernel_regex = top.string_or("kernel_regex", ".*");
  if (f.kernel_regex.size() > 1000) { // std::regex compiles recursively: bounded input only
    throw Error(top.where("kernel_regex") + ": expected a regex of at most 1000 characters, got " +
                std::to_string(f.kernel_regex.size()));
  }
  try {
    std::regex check(f.kernel_regex, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    throw Error(top.where("kernel_regex") + ": invalid regex '" + util::excerpt(f.kernel_regex) +
                "': " + e.what());
  }

  f.editable = top.strings("editable");
  for (size_t i = 0; i < f.editable.size(); ++i) {
    check_relative(top.where("editable") + "[" + std::to_string(i) + "]", f.editable[i]);
  }
  if (std::find(f.editable.begin(), f.editable.end(), f.kernel_header) == f.editable.end()) {
    throw Error(top.where("kernel") + ".header: '" + f.kernel_header +
                "' must also be listed in editable (generated code includes only the " +
                "candidate's copies)");
  }

  std::string candidates = top.string_or("candidates", "candidates");
  check_relative(top.where("candidates"), candidates);
  f.candidates_dir = family_path(f.dir, candidates);
}

// timeout_s and compile_budget_s.
void load_limits(Family &f, const Fields &top) {
  f.timeout_s = top.number_or("timeout_s", defaults::timeout_s);
  if (!(f.timeout_s > 0)) {
    throw Error(top.where("timeout_s") + ": expected a positive number of seconds, got " +
                util::dump_json(top.json().at("timeout_s"), -1));
  }
  f.compile_budget_s = top.number_or("compile_budget_s", 0);
  if (top.has("compile_budget_s") && !(f.compile_budget_s > 0)) {
    throw Error(top.where("compile_budget_s") + ": expected a positive number of seconds, got " +
                util::dump_json(top.json().at("compile_budget_s"), -1));
  }
}

// bench: warmup, repeat and rounds of a benchmark; pin_cpu for host families, profiler for cuda
// families.
void load_bench(Family &f, const Fields &top) {
  if (top.has("bench")) {
    Fields bench(top.json().at("bench"), top.file(), "bench");
    bench.reject_unknown({"warmup", "repeat", "rounds", "pin_cpu", "profiler"});
    if (bench.has("profiler")) {
      if (f.backend != Backend::cuda) {
        throw Error(bench.where("profiler") +
                    ": only cuda families choose their profiler (backend " + to_string(f.backend) +
                    ")");
      }
      f.profiler = bench.string_or("profiler", "");
      if (f.profiler != "cupti" && f.profiler != "ncu") {
        fail_expected(bench.where("profiler"), "\"cupti\" or \"ncu\"", bench.json().at("profiler"));
      }
    }
    if (bench.has("pin_cpu") && f.backend != Backend::host) {
      throw Error(bench.where("pin_cpu") +
                  ": only host families pin their runs to a CPU (backend " + to_string(f.backend) +
                  ")");
    }
    f.pin_cpu = bench.boolean_or("pin_cpu", f.pin_cpu);
    int64_t warmup = bench.integer_or("warmup", defaults::warmup);
    int64_t repeat = bench.integer_or("repeat", defaults::repeat);
    int64_t rounds = bench.integer_or("rounds", f.rounds);
    if (rounds < 2 || rounds > 1000) {
      fail_expected(bench.where("rounds"), "an integer from 2 to 1000", bench.json().at("rounds"));
    }
    f.rounds = static_cast<int>(rounds);
    if (warmup < 0 || warmup > 1000000) {
      fail_expected(bench.where("warmup"), "an integer >= 0", bench.json().at("warmup"));
    }
    if (repeat < 1 || repeat > 1000000) {
      fail_expected(bench.where("repeat"), "an integer >= 1", bench.json().at("repeat"));
    }
    f.warmup = static_cast<int>(warmup);
    f.repeat = static_cast<int>(repeat);
  }
}

// keep: the keep test's threshold, confidence and max_regression.
void load_keep(Family &f, const Fields &top) {
  if (top.has("keep")) {
    Fields keep(top.json().at("keep"), top.file(), "keep");
    keep.reject_unknown({"threshold", "confidence", "max_regression", "weighting"});
    std::string weighting = keep.string_or("weighting", "equal");
    if (weighting == "count") {
      f.keep_weighting = KeepWeighting::count;
    } else if (weighting == "traffic") {
      f.keep_weighting = KeepWeighting::traffic;
    } else if (weighting != "equal") {
      fail_expected(keep.where("weighting"), "\"equal\", \"count\" or \"traffic\"",
                    keep.json().at("weighting"));
    }
    if (f.keep_weighting != KeepWeighting::equal &&
        util::read_csv(f.configs).find_column("count") < 0) {
      throw Error(keep.where("weighting") + ": \"" + weighting +
                  "\" weighs configs by the configs file's count column, and " +
                  f.configs.string() + " has none (make one with kopt capture merge)");
    }
    f.keep_threshold = keep.number_or("threshold", f.keep_threshold);
    f.keep_confidence = keep.number_or("confidence", f.keep_confidence);
    f.keep_max_regression = keep.number_or("max_regression", f.keep_max_regression);
    if (!(f.keep_threshold > 0 && f.keep_threshold < 1)) {
      fail_expected(keep.where("threshold"), "a fraction between 0 and 1 (0.01 is 1%)",
                    keep.json().at("threshold"));
    }
    if (!(f.keep_confidence >= 0.5 && f.keep_confidence < 1)) {
      fail_expected(keep.where("confidence"), "a probability from 0.5 to below 1 (e.g. 0.95)",
                    keep.json().at("confidence"));
    }
    if (!(f.keep_max_regression >= 0 && f.keep_max_regression < 1)) {
      fail_expected(keep.where("max_regression"), "a fraction from 0 to below 1 (0.02 is 2%)",
                    keep.json().at("max_regression"));
    }
  }
}

// app: the application built per candidate (sources), how one run goes (command), and how many
// side-by-side rounds `kopt app` makes.
void load_app(Family &f, const Fields &top) {
  if (!top.has("app")) {
    return;
  }
  Fields app(top.json().at("app"), top.file(), "app");
  app.reject_unknown({"sources", "command", "rounds", "timeout_s"});
  App a;
  std::vector<std::string> sources = app.strings("sources");
  if (sources.empty()) {
    fail_expected(app.where("sources"), "at least one source file", app.json().at("sources"));
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string where = app.where("sources") + "[" + std::to_string(i) + "]";
    check_relative(where, sources[i]);
    fs::path path = family_path(f.dir, sources[i]);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      throw Error(where + ": file not found: " + util::excerpt(path.string(), 200));
    }
    a.sources.push_back(path);
  }
  a.command = app.has("command") ? app.strings("command") : std::vector<std::string>{"{exe}"};
  bool names_exe = false;
  for (const std::string &word : a.command) {
    names_exe = names_exe || word.find("{exe}") != std::string::npos;
  }
  if (!names_exe) {
    fail_expected(app.where("command"),
                  "a command with {exe} (the candidate's variant of the application) in it",
                  app.json().at("command"));
  }
  int64_t rounds = app.integer_or("rounds", a.rounds);
  if (rounds < 2 || rounds > 1000) {
    fail_expected(app.where("rounds"), "an integer from 2 to 1000", app.json().at("rounds"));
  }
  a.rounds = static_cast<int>(rounds);
  a.timeout_s = app.number_or("timeout_s", 0);
  if (!(a.timeout_s >= 0 && a.timeout_s <= 86400)) {
    fail_expected(app.where("timeout_s"), "seconds from 0 (the family's timeout_s) to 86400",
                  app.json().at("timeout_s"));
  }
  f.app = a;
}

} // namespace

std::string Family::types_include() const {
  if (kernel_types.empty()) {
    return "src/" + kernel_header;
  }
  bool editable_types = std::find(editable.begin(), editable.end(), kernel_types) != editable.end();
  return editable_types ? "src/" + kernel_types : kernel_types;
}

const Instance *Family::find_instance(const std::string &instance_name) const {
  for (const auto &instance : instances) {
    if (instance.name == instance_name) {
      return &instance;
    }
  }
  return nullptr;
}

Family load_family(const fs::path &file) {
  nlohmann::json json = util::read_json(file);
  Fields top(json, file.string(), "");
  top.reject_unknown(kFamilyFields);

  Family f;
  f.file = fs::absolute(file).lexically_normal();
  f.dir = f.file.parent_path();

  load_identity(f, top);
  load_kernel(f, top);
  load_instances(f, top);
  load_dispatch(f, top);
  f.default_kernel = top.string("default");
  check_instance(f, top.where("default"), f.default_kernel);
  load_heuristic(f, top);
  load_build_options(f, top);
  load_classes(f, top);
  f.configs = existing_file(top, "configs", f.dir);
  check_configs(f, top);
  // The harness is built as the candidate's code: from the family folder, never from elsewhere.
  check_relative(top.where("harness"), top.string("harness"));
  f.harness = existing_file(top, "harness", f.dir);
  load_sources(f, top);
  load_limits(f, top);
  load_bench(f, top);
  load_keep(f, top);
  load_app(f, top);
  if (top.has("roofline")) {
    f.roofline = load_roofline(Fields(top.json().at("roofline"), top.file(), "roofline"),
                               f.configs.string());
  }
  return f;
}

std::string config_class(const ClassSpec &classes, const std::vector<std::string> &header,
                         const std::vector<std::string> &row) {
  std::vector<std::string> labels;
  for (const auto &column : classes.columns) {
    auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end()) {
      throw Error("config class column '" + column +
                  "' is missing (columns: " + util::join(header, ", ") + ")");
    }
    size_t index = static_cast<size_t>(it - header.begin());
    if (index >= row.size()) {
      throw Error("config class column '" + column + "': the row has only " +
                  std::to_string(row.size()) + " values");
    }
    std::string value(util::trim(row[index]));
    auto buckets = classes.buckets.find(column);
    if (buckets == classes.buckets.end()) {
      labels.push_back(column + "=" + value);
      continue;
    }
    double v = util::parse_double(value, "config class column '" + column + "'");
    const auto &edges = buckets->second;
    auto edge = [](double e) { return util::format_number(e, 15); };
    if (v < edges.front()) {
      labels.push_back(column + "<" + edge(edges.front()));
    } else if (v >= edges.back()) {
      labels.push_back(column + ">=" + edge(edges.back()));
    } else {
      for (size_t i = 0; i + 1 < edges.size(); ++i) {
        if (v >= edges[i] && v < edges[i + 1]) {
          labels.push_back(edge(edges[i]) + "<=" + column + "<" + edge(edges[i + 1]));
          break;
        }
      }
    }
  }
  return util::join(labels, ",");
}

std::string to_string(Backend backend) { return util::name_of(kBackends, backend, "?"); }

} // namespace kopt::spec
