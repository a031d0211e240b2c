#include "candidate/land_journal.hpp"

#include "candidate/new_candidate.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"

#include <algorithm>
#include <optional>

namespace kopt::candidate {

namespace fs = std::filesystem;

namespace {

constexpr const char *kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Bytes as JSON text: a candidate's file need not be UTF-8.
std::string to_base64(const std::string &bytes) {
  auto at = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])); };
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    size_t left = bytes.size() - i;
    uint32_t n = at(i) << 16 | (left > 1 ? at(i + 1) << 8 : 0) | (left > 2 ? at(i + 2) : 0);
    out += kBase64[(n >> 18) & 63];
    out += kBase64[(n >> 12) & 63];
    out += left > 1 ? kBase64[(n >> 6) & 63] : '=';
    out += left > 2 ? kBase64[n & 63] : '=';
  }
  return out;
}

std::string from_base64(const std::string &text, const std::string &where) {
  std::string out;
  uint32_t n = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') {
      break;
    }
    const char *at = std::char_traits<char>::find(kBase64, 64, c);
    if (at == nullptr) {
      throw Error(where + ": not base64 (a '" + std::string(1, c) + "')");
    }
    n = (n << 6) | static_cast<uint32_t>(at - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((n >> bits) & 0xff);
    }
  }
  return out;
}

nlohmann::json files_json(const std::map<std::string, std::string> &files) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto &[rel, bytes] : files) {
    j[rel] = to_base64(bytes);
  }
  return j;
}

// The files of a journal's field: each a relative path that stays inside its folder.
std::map<std::string, std::string> files_from(const nlohmann::json &j, const std::string &where) {
  if (!j.is_object()) {
    throw Error(where + ": expected an object of base64 texts");
  }
  std::map<std::string, std::string> files;
  for (const auto &[rel, text] : j.items()) {
    fs::path path(rel);
    if (rel.empty() || !path.is_relative() ||
        std::any_of(path.begin(), path.end(), [](const fs::path &p) { return p == ".."; })) {
      throw Error(where + ": '" + rel + "' is no relative path inside the folder");
    }
    if (!text.is_string()) {
      throw Error(where + "." + rel + ": expected a base64 text");
    }
    files[rel] = from_base64(text.get<std::string>(), where + "." + rel);
  }
  return files;
}

NewRequest request_of(const spec::CandidateSpec &spec, const std::string &base) {
  NewRequest r;
  r.id = spec.id;
  r.base = base;
  r.hypothesis = spec.hypothesis;
  r.target = spec.target;
  r.proposal = spec.proposal == spec.id ? "" : spec.proposal;
  return r;
}

// Removes the `<name>.tmp.*` files a killed atomic write of `file` left beside it.
int remove_temps_of(const fs::path &file) {
  std::string prefix = file.filename().string() + ".tmp.";
  std::vector<fs::path> temps;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(file.parent_path(), ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.size() > prefix.size()) {
      temps.push_back(entry.path());
    }
  }
  for (const fs::path &temp : temps) {
    fs::remove(temp, ec);
  }
  return static_cast<int>(temps.size());
}

std::string what_landed(const LandJournal &journal) { return "land of candidate " + journal.id; }

// Steps 2-8 of the write order.
std::string finish(const spec::Family &family, const fs::path &path, const LandJournal &journal,
                   const RecordLine &record_line, util::ProcessRunner &runner) {
  apply_tree(family, journal);
  for (const auto &[id, patch] : journal.patches) {
    fs::create_directories(journal.patch_dir);
    util::write_file_if_changed(journal.patch_dir / (id + ".patch"), patch);
  }
  if (!journal.ledger_line.is_null()) {
    record_line(journal.ledger_line);
  }
  std::string commit;
  if (!journal.commit_message.empty()) {
    try {
      commit = commit_paths(family, journal_paths(family, journal), journal.commit_message, runner);
    } catch (const Error &e) {
      // A hook that refuses every commit would hold the journal for good: say what is left.
      throw Error(std::string(e.what()) + " (the landing is written and recorded, only its " +
                  "commit is left: commit it yourself and remove " + path.string() +
                  ", or fix the cause)");
    }
  }
  util::remove_file(path);
  return commit;
}

} // namespace

LandJournal journal_of(const CandidateSet &candidates, const LandPlan &plan) {
  LandJournal journal;
  journal.id = plan.id;
  journal.hash = plan.hash;
  for (const auto &[other, kept] : plan.rebased) {
    journal.folders[other] = kept;
    journal.folders[other]["candidate.json"] =
        candidate_json(request_of(candidates.get(other).spec, plan.id));
  }
  journal.folders[plan.id] = {
      {"candidate.json", candidate_json(request_of(candidates.get(plan.id).spec, ""))}};
  for (const std::string &rel : plan.written) {
    journal.files[rel] = plan.files.at(rel);
  }
  journal.removed = plan.removed;
  return journal;
}

nlohmann::json to_json(const LandJournal &journal) {
  nlohmann::json folders = nlohmann::json::object();
  for (const auto &[id, files] : journal.folders) {
    folders[id] = files_json(files);
  }
  return {{"candidate", journal.id},
          {"hash", journal.hash},
          {"folders", folders},
          {"files", files_json(journal.files)},
          {"removed", journal.removed},
          {"patch_dir", journal.patch_dir.string()},
          {"patches", files_json(journal.patches)},
          {"ledger_line", journal.ledger_line},
          {"commit_message", journal.commit_message}};
}

LandJournal land_journal_from_json(const nlohmann::json &j, const std::string &source) {
  LandJournal journal;
  journal.id = util::json_field<std::string>(j, "candidate", source);
  journal.hash = util::json_field<std::string>(j, "hash", source);
  auto folders = util::json_field<nlohmann::json>(j, "folders", source);
  if (!folders.is_object()) {
    throw Error(source + ": folders: expected an object");
  }
  for (const auto &[id, files] : folders.items()) {
    journal.folders[id] = files_from(files, source + ": folders." + id);
  }
  journal.files =
      files_from(util::json_field<nlohmann::json>(j, "files", source), source + ": files");
  journal.removed = util::json_field<std::vector<std::string>>(j, "removed", source);
  journal.patch_dir = util::json_field<std::string>(j, "patch_dir", source);
  journal.patches =
      files_from(util::json_field<nlohmann::json>(j, "patches", source), source + ": patches");
  journal.ledger_line = util::json_field<nlohmann::json>(j, "ledger_line", source);
  journal.commit_message = util::json_field<std::string>(j, "commit_message", source);
  // The journal names folders and files by id: none may reach outside the folder it is in.
  auto check_id = [&](const std::string &id, const char *field) {
    if (id.empty() || fs::path(id).filename() != id || id.starts_with(".")) {
      throw Error(source + ": " + field + ": '" + id + "' is no candidate id");
    }
  };
  for (const std::string &id : journal.removed) {
    check_id(id, "removed");
  }
  for (const auto &[id, files] : journal.folders) {
    check_id(id, "folders");
  }
  for (const auto &[id, patch] : journal.patches) {
    check_id(id, "patches");
  }
  return journal;
}

fs::path land_journal_path(const spec::Layout &layout) { return layout.root / "land.journal"; }

void apply_tree(const spec::Family &family, const LandJournal &journal) {
  for (const auto &[id, files] : journal.folders) {
    write_folder_whole(family.candidates_dir / id, files);
  }
  for (const auto &[rel, bytes] : journal.files) {
    fs::create_directories((family.dir / rel).parent_path());
    util::write_file_atomic(family.dir / rel, bytes);
  }
  for (const std::string &gone : journal.removed) {
    util::remove_tree(family.candidates_dir / gone);
  }
}

std::vector<fs::path> journal_paths(const spec::Family &family, const LandJournal &journal) {
  std::vector<fs::path> paths;
  for (const auto &[rel, bytes] : journal.files) {
    paths.push_back(family.dir / rel);
  }
  for (const auto &[id, files] : journal.folders) {
    paths.push_back(family.candidates_dir / id);
  }
  for (const std::string &id : journal.removed) {
    paths.push_back(family.candidates_dir / id);
  }
  return paths;
}

std::string run_land(const spec::Family &family, const spec::Layout &layout,
                     const LandJournal &journal, const RecordLine &record_line,
                     util::ProcessRunner &runner) {
  util::InterruptShield shield;
  fs::path path = land_journal_path(layout);
  fs::create_directories(path.parent_path());
  util::write_json_atomic(path, to_json(journal));
  std::string kept = "; the " + what_landed(journal) + " is kept in " + path.string() +
                     ": the next kopt command on this family completes it";
  try {
    return finish(family, path, journal, record_line, runner);
  } catch (const util::Interrupted &e) {
    throw util::Interrupted(e.signal(), e.what() + kept); // still an interruption, not an error
  } catch (const std::exception &e) {
    throw Error(e.what() + kept + " (once the cause is fixed)");
  }
}

bool land_pending(const spec::Layout &layout) {
  fs::path path = land_journal_path(layout);
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    return true;
  }
  std::string prefix = path.filename().string() + ".tmp.";
  for (const auto &entry : fs::directory_iterator(path.parent_path(), ec)) {
    if (entry.path().filename().string().starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> complete_land(const spec::Family &family, const spec::Layout &layout,
                                       const RecordLine &record_line, util::ProcessRunner &runner,
                                       FamilyLock lock) {
  if (!land_pending(layout)) {
    return {};
  }
  std::optional<util::FileLock> family_lock;
  if (lock == FamilyLock::take) {
    family_lock.emplace(layout.lock("family"), nullptr, util::FileLock::Mode::exclusive,
                        "kopt completing an interrupted land");
  }
  util::InterruptShield shield;
  fs::path path = land_journal_path(layout);
  int temps = remove_temps_of(path);
  int staging = sweep_staging(family.candidates_dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (temps == 0) {
      return {}; // another command completed it while this one waited for the lock
    }
    return {"rolled back an interrupted land: its journal " + path.string() +
            " was never completed (its temp file removed), so nothing of it was applied: the "
            "family's files, candidates and ledger are as before it"};
  }
  LandJournal journal = land_journal_from_json(util::read_json(path), path.string());
  for (const auto &[rel, bytes] : journal.files) {
    temps += remove_temps_of(family.dir / rel);
  }
  for (const auto &[id, patch] : journal.patches) {
    temps += remove_temps_of(journal.patch_dir / (id + ".patch"));
  }
  std::string commit;
  try {
    commit = finish(family, path, journal, record_line, runner);
  } catch (const util::Interrupted &) {
    throw;
  } catch (const std::exception &e) {
    throw Error(std::string(e.what()) + "; while completing the " + what_landed(journal) +
                " kept in " + path.string() + ": fix the cause and run kopt again");
  }
  int swept = temps + staging;
  std::string left = swept == 0   ? ""
                     : swept == 1 ? " (a temp file or staging folder of its writes removed)"
                                  : " (" + std::to_string(swept) +
                                        " temp files and staging folders of its writes removed)";
  return {"completed the interrupted " + what_landed(journal) + " from " + path.string() + left +
          ": the family's files, candidate folders" +
          (journal.ledger_line.is_null() ? "" : ", ledger line") +
          (journal.commit_message.empty() ? "" : " and commit") + " are the landing's" +
          (commit.empty() ? "" : " (committed " + commit.substr(0, 12) + ")")};
}

} // namespace kopt::candidate
