#include "candidate/candidate.hpp"

#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

namespace kopt::candidate {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> ids(const std::vector<Candidate> &candidates) {
  std::vector<std::string> out;
  for (const auto &c : candidates) {
    out.push_back(c.id());
  }
  return out;
}

// The candidates whose target names no config class of the family's configs, one line each.
std::vector<std::string> find_target_problems(const spec::Family &family,
                                              const std::vector<Candidate> &candidates) {
  auto targeted = [](const Candidate &c) { return c.spec.target != "global"; };
  if (std::none_of(candidates.begin(), candidates.end(), targeted)) {
    return {};
  }
  util::CsvTable configs = util::read_csv(family.configs);
  std::vector<std::string> classes;
  for (const auto &row : configs.rows) {
    std::string name = spec::config_class(family.classes, configs.header, row);
    if (std::find(classes.begin(), classes.end(), name) == classes.end()) {
      classes.push_back(name);
    }
  }
  std::vector<std::string> problems;
  for (const auto &c : candidates) {
    const std::string &target = c.spec.target;
    if (!targeted(c) || std::find(classes.begin(), classes.end(), target) != classes.end()) {
      continue;
    }
    std::string hint = util::nearest(target, classes);
    problems.push_back((c.dir / "candidate.json").string() + ": target: '" + target +
                       "' is not a config class of " + family.configs.filename().string() +
                       " (classes: " + util::join(classes, ", ") + ", or global)" +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
  }
  return problems;
}

} // namespace

CandidateSet CandidateSet::discover(const spec::Family &family) {
  const fs::path &root = family.candidates_dir;
  if (!fs::is_directory(root)) {
    throw Error(family.file.string() + ": candidates: folder not found: " + root.string());
  }
  CandidateSet set;
  for (const auto &entry : fs::directory_iterator(root)) {
    std::string folder = entry.path().filename().string();
    // Hidden folders (.git, editor state) are not candidates.
    if (!entry.is_directory() || folder.starts_with(".")) {
      continue;
    }
    fs::path json = entry.path() / "candidate.json";
    if (std::error_code ec; !fs::exists(json, ec) && !fs::is_symlink(json, ec)) {
      set.skipped_.push_back(entry.path()); // a scratch folder: not a candidate
      continue;
    }
    set.candidates_.push_back({spec::load_candidate_spec(json, folder), entry.path()});
  }
  std::sort(set.skipped_.begin(), set.skipped_.end());
  std::sort(set.candidates_.begin(), set.candidates_.end(),
            [](const Candidate &a, const Candidate &b) { return a.id() < b.id(); });

  for (const auto &c : set.candidates_) {
    if (c.spec.base.empty()) {
      continue;
    }
    std::string where = (c.dir / "candidate.json").string() + ": base";
    std::vector<std::string> seen = {c.id()};
    const Candidate *at = &c;
    while (!at->spec.base.empty()) {
      auto next = std::find_if(set.candidates_.begin(), set.candidates_.end(),
                               [&](const Candidate &x) { return x.id() == at->spec.base; });
      if (next == set.candidates_.end()) {
        throw Error(where + ": unknown candidate '" + at->spec.base + "'" +
                    (at == &c ? "" : " (base of " + at->id() + ")") +
                    " (candidates: " + util::join(ids(set.candidates_), ", ") + ")");
      }
      seen.push_back(next->id());
      if (next->id() == c.id()) {
        throw Error(where + ": the base chain is a cycle: " + util::join(seen, " -> "));
      }
      if (std::count(seen.begin(), seen.end(), next->id()) > 1) {
        break; // a cycle further up the chain: reported for its own members
      }
      at = &*next;
    }
  }
  set.target_problems_ = find_target_problems(family, set.candidates_);
  return set;
}

const Candidate &CandidateSet::get(const std::string &id) const {
  for (const auto &c : candidates_) {
    if (c.id() == id) {
      return c;
    }
  }
  throw Error(unknown_candidate(id, ids(candidates_), landed_dir_));
}

std::string same_number(const std::string &id, const std::vector<std::string> &ids) {
  auto value = [](const std::string &text) -> std::optional<std::string> {
    if (text.empty() ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return std::nullopt;
    }
    size_t first = text.find_first_not_of('0');
    return first == std::string::npos ? "0" : text.substr(first);
  };
  std::optional<std::string> wanted = value(id);
  if (!wanted) {
    return "";
  }
  for (const std::string &other : ids) {
    if (other != id && value(other) == wanted) {
      return other;
    }
  }
  return "";
}

std::string unknown_candidate(const std::string &id, const std::vector<std::string> &ids,
                              const fs::path &landed_dir) {
  std::string there = " (candidates: " + util::join(ids, ", ") + ")";
  if (id.size() > spec::max_candidate_id_size) {
    return "'" + util::excerpt(id) + "' is not a candidate id: expected " +
           spec::candidate_id_rule() + there;
  }
  std::error_code ec;
  if (!landed_dir.empty() && fs::is_directory(landed_dir, ec)) {
    std::vector<std::string> landed;
    for (const auto &entry : fs::directory_iterator(landed_dir, ec)) {
      if (entry.path().extension() == ".patch") {
        landed.push_back(entry.path().stem().string());
      }
    }
    std::string found =
        std::find(landed.begin(), landed.end(), id) != landed.end() ? id : same_number(id, landed);
    if (!found.empty()) {
      return "candidate '" + found + "' was landed: kopt land removed its folder; its patch is " +
             (landed_dir / (found + ".patch")).string() + there;
    }
  }
  std::string hint = same_number(id, ids);
  return "unknown candidate '" + id + "'" + (hint.empty() ? "" : ", did you mean '" + hint + "'?") +
         there;
}

std::vector<const Candidate *> CandidateSet::chain(const std::string &id) const {
  std::vector<const Candidate *> out;
  const Candidate *at = &get(id);
  out.push_back(at);
  while (!at->spec.base.empty()) {
    at = &get(at->spec.base);
    if (std::find(out.begin(), out.end(), at) != out.end()) {
      throw Error("candidate " + id + ": the base chain is a cycle");
    }
    out.push_back(at);
  }
  return out;
}

std::vector<fs::path> CandidateSet::search_folders(const spec::Family &family,
                                                   const std::string &id) const {
  std::vector<fs::path> folders;
  for (const Candidate *c : chain(id)) {
    folders.push_back(c->dir);
  }
  folders.push_back(family.dir);
  return folders;
}

std::map<std::string, fs::path> CandidateSet::resolve_sources(const spec::Family &family,
                                                              const std::string &id) const {
  const std::vector<fs::path> folders = search_folders(family, id);
  std::set<std::string> names(family.editable.begin(), family.editable.end());
  names.insert(family.kernel_template);
  std::map<std::string, fs::path> resolved;
  for (const auto &name : names) {
    fs::path found;
    for (const auto &folder : folders) {
      if (fs::is_regular_file(folder / name)) {
        found = folder / name;
        break;
      }
    }
    if (found.empty()) {
      std::vector<std::string> chain_ids;
      for (const Candidate *c : chain(id)) {
        chain_ids.push_back(c->id());
      }
      throw Error(name + ": not found in candidate " + id + "'s chain (" +
                  util::join(chain_ids, " -> ") + ") nor in the family folder " +
                  family.dir.string());
    }
    resolved[name] = found.lexically_normal();
  }
  return resolved;
}

std::map<std::string, fs::path>
CandidateSet::resolve_instance_templates(const spec::Family &family, const std::string &id) const {
  std::map<std::string, fs::path> resolved;
  for (const auto &folder : search_folders(family, id)) {
    std::error_code ec;
    if (!fs::is_directory(folder / "instances", ec)) {
      continue;
    }
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(folder / "instances")) {
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto &file : files) {
      std::string name = file.stem().string();
      if (file.extension() != ".in" || !fs::is_regular_file(file)) {
        throw Error(file.string() + ": an instance template override must be a file named "
                                    "instances/<instance name>.in");
      }
      if (!family.find_instance(name)) {
        std::vector<std::string> known;
        for (const auto &instance : family.instances) {
          known.push_back(instance.name);
        }
        throw Error(file.string() + ": '" + name + "' is not an instance of family '" +
                    family.name + "' (instances: " + util::join(known, ", ") + ")");
      }
      resolved.emplace(name, file.lexically_normal()); // the nearest copy wins
    }
  }
  return resolved;
}

std::string CandidateSet::content_hash(const spec::Family &family, const std::string &id) const {
  std::map<std::string, std::string> sources;
  for (const auto &[name, path] : resolve_sources(family, id)) {
    sources[name] = util::read_file(path);
  }
  std::map<std::string, std::string> instance_templates;
  for (const auto &[name, path] : resolve_instance_templates(family, id)) {
    instance_templates[name] = util::read_file(path);
  }
  return content_hash_of(family, sources, instance_templates);
}

std::string content_hash_of(const spec::Family &family,
                            const std::map<std::string, std::string> &sources,
                            const std::map<std::string, std::string> &instance_templates) {
  util::Hasher hasher;
  hasher.add(util::read_file(family.file));
  // std::map iterates in sorted name order, which the hash depends on.
  for (const auto &[name, bytes] : sources) {
    hasher.add(name);
    hasher.add(bytes);
  }
  for (const auto &[name, bytes] : instance_templates) {
    hasher.add("instances/" + name + ".in");
    hasher.add(bytes);
  }
  if (!family.tuned.empty()) {
    hasher.add(util::read_file(family.tuned));
  }
  if (!family.heuristic_file.empty()) {
    hasher.add(util::read_file(family.heuristic_file));
  }
  return hasher.hex();
}

std::map<std::string, std::string> CandidateSet::files(const spec::Family &family,
                                                       const std::string &id) const {
  std::map<std::string, std::string> files;
  for (const auto &[name, path] : resolve_sources(family, id)) {
    files[name] = util::read_file(path);
  }
  for (const auto &[name, path] : resolve_instance_templates(family, id)) {
    files["instances/" + name + ".in"] = util::read_file(path);
  }
  return files;
}

namespace {

std::string kind_of(const fs::file_status &status) {
  switch (status.type()) {
  case fs::file_type::directory:
    return "a folder";
  case fs::file_type::character:
    return "a character device";
  case fs::file_type::block:
    return "a block device";
  case fs::file_type::fifo:
    return "a FIFO";
  case fs::file_type::socket:
    return "a socket";
  default:
    return "not a regular file";
  }
}

} // namespace

std::string why_not_plain_inside(const fs::path &root, const std::string &rel, Missing missing) {
  fs::path normal = fs::path(rel).lexically_normal();
  if (normal.empty() || normal.is_absolute() || normal.begin()->string() == "..") {
    return "leaves the folder";
  }
  fs::path at = root;
  fs::path walked;
  for (auto part = normal.begin(); part != normal.end(); ++part) {
    at /= *part;
    walked /= *part;
    bool last = std::next(part) == normal.end();
    std::string who = last ? "" : "is under " + walked.generic_string() + ", which ";
    std::error_code ec;
    fs::file_status status = fs::symlink_status(at, ec);
    if (status.type() == fs::file_type::not_found) {
      return missing == Missing::allowed ? "" : "does not exist";
    }
    if (ec) {
      return who + "cannot be read: " + ec.message();
    }
    if (fs::is_symlink(status)) {
      return who + "is a symlink to " + fs::read_symlink(at, ec).string();
    }
    if (!last && !fs::is_directory(status)) {
      return who + "is not a folder";
    }
    if (last && !fs::is_regular_file(status)) {
      return "is " + kind_of(status);
    }
  }
  return "";
}

void write_files(const std::filesystem::path &root,
                 const std::map<std::string, std::string> &files) {
  for (const auto &[rel, bytes] : files) {
    std::string why = why_not_plain_inside(root, rel, Missing::allowed);
    if (!why.empty()) {
      throw Error((root / rel).string() + " " + why + ": kopt writes regular files inside " +
                  root.string() + " only; refused, nothing written");
    }
  }
  for (const auto &[rel, bytes] : files) {
    std::filesystem::create_directories((root / rel).parent_path());
    util::write_file_atomic(root / rel, bytes);
  }
}

std::string content_hash_of_files(const spec::Family &family,
                                  const std::map<std::string, std::string> &files) {
  std::map<std::string, std::string> sources;
  std::map<std::string, std::string> instance_templates;
  for (const auto &[rel, bytes] : files) {
    if (rel.starts_with("instances/") && rel.ends_with(".in")) {
      instance_templates[rel.substr(10, rel.size() - 13)] = bytes;
    } else {
      sources[rel] = bytes;
    }
  }
  return content_hash_of(family, sources, instance_templates);
}

} // namespace kopt::candidate
