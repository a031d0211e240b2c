#include "ledger/journal.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <cerrno>
#include <cstring>
#include <limits>
#include <unistd.h>

namespace kopt::ledger {

namespace fs = std::filesystem;

namespace {

// The ledger's own files whose atomic writes may leave a `<name>.tmp.XXXXXX` behind.
bool is_temp_of_ledger(const std::string &name) {
  for (const char *file : {"state.json", "performance.md", "ledger.journal"}) {
    std::string prefix = std::string(file) + ".tmp.";
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) {
      return true;
    }
  }
  return false;
}

std::vector<fs::path> temp_files(const Files &files) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(files.dir, ec)) {
    if (is_temp_of_ledger(entry.path().filename().string())) {
      found.push_back(entry.path());
    }
  }
  return found;
}

bool journal_exists(const Files &files) {
  std::error_code ec;
  return fs::symlink_status(files.journal(), ec).type() != fs::file_type::not_found;
}

// attempts.jsonl's size in bytes: 0 when it is missing (or a link to a file not made yet);
// anything but a regular file throws, before the journal is written.
uintmax_t attempts_size(const Files &files) {
  std::error_code ec;
  fs::file_status status = fs::status(files.attempts(), ec);
  if (status.type() == fs::file_type::not_found) {
    return 0;
  }
  if (status.type() != fs::file_type::regular) {
    throw Error(files.attempts().string() + ": not a regular file" +
                (status.type() == fs::file_type::directory ? " (a directory)" : "") +
                (ec ? ": " + ec.message() : ""));
  }
  uintmax_t size = fs::file_size(files.attempts(), ec);
  if (ec) {
    throw Error(files.attempts().string() + ": cannot read its size: " + ec.message());
  }
  return size;
}

// Makes attempts.jsonl end with `line`: appended when the file is as the journal found it,
// left alone when the line is already there, cut back and appended when it was cut short.
void complete_append(const Files &files, uintmax_t size_before, const std::string &line) {
  uintmax_t size = attempts_size(files);
  std::string where = files.attempts().string() + " (" + std::to_string(size) + " bytes, " +
                      std::to_string(size_before) + " when the record in " +
                      files.journal().string() + " began)";
  if (size < size_before) {
    throw Error(where + ": shorter than before the record: restore attempts.jsonl, then run kopt "
                        "again to complete the record");
  }
  if (size > size_before) {
    std::string tail = util::read_file(files.attempts()).substr(size_before);
    std::string whole = line + "\n";
    if (tail == whole || tail == "\n" + whole) {
      return;
    }
    if (whole.rfind(tail, 0) != 0 && ("\n" + whole).rfind(tail, 0) != 0) {
      throw Error(where + ": ends with lines that are not the record's: restore attempts.jsonl, "
                          "then run kopt again to complete the record");
    }
    if (::truncate(files.attempts().c_str(), static_cast<off_t>(size_before)) != 0) {
      throw Error(files.attempts().string() +
                  ": cannot cut back a half-written line: " + std::strerror(errno));
    }
  }
  util::append_line(files.attempts(), line);
}

std::string what_was_recorded(const nlohmann::json &line) {
  std::string kind = line.value("kind", "change");
  std::string candidate = line.value("candidate", "");
  return kind == "attempt"   ? "attempt of " + candidate
         : candidate.empty() ? kind
                             : kind + " " + candidate;
}

} // namespace

void commit(const Files &files, const Change &change) {
  uintmax_t size = attempts_size(files);
  // Invalid UTF-8 in a field (a hypothesis) is replaced, never thrown half way through.
  const std::string text = util::dump_json(change.line, -1);
  util::write_json_atomic(files.journal(),
                          {{"attempts_size", size}, {"line", text}, {"state", change.state}});
  try {
    util::append_line(files.attempts(), text);
    util::write_json_atomic(files.state(), change.state);
    util::write_file_atomic(files.performance(), change.performance);
    util::remove_file(files.journal());
  } catch (const Error &e) {
    throw Error(std::string(e.what()) + "; the " + what_was_recorded(change.line) + " is kept in " +
                files.journal().string() +
                ": the next kopt command on this ledger completes it (once the cause is fixed)");
  }
}

std::string unreadable_state(const Files &files) {
  std::error_code ec;
  fs::file_status link = fs::symlink_status(files.state(), ec);
  if (link.type() == fs::file_type::not_found) {
    return "missing";
  }
  if (link.type() != fs::file_type::symlink) {
    return "";
  }
  (void)fs::status(files.state(), ec);
  if (ec == std::errc::too_many_symbolic_link_levels) {
    return "a link loop";
  }
  return ec ? "a dangling link" : "";
}

bool needs_recovery(const Files &files) {
  return journal_exists(files) || !temp_files(files).empty();
}

std::vector<std::string> recover(const Files &files, const RenderPerformance &render) {
  std::vector<std::string> notes;
  std::vector<fs::path> temps = temp_files(files);
  for (const fs::path &temp : temps) {
    std::error_code ec;
    fs::remove(temp, ec);
  }
  if (!temps.empty()) {
    notes.push_back("removed " + std::to_string(temps.size()) + " temp file" +
                    (temps.size() == 1 ? "" : "s") + " of an interrupted write in " +
                    files.dir.string());
  }
  if (!journal_exists(files)) {
    return notes;
  }
  std::string source = files.journal().string();
  nlohmann::json journal = util::read_json(files.journal());
  auto size = static_cast<uintmax_t>(
      util::json_int_in(journal, "attempts_size", 0, std::numeric_limits<int64_t>::max(), source));
  auto text = util::json_field<std::string>(journal, "line", source);
  nlohmann::json line = util::parse_json(text, source + ": line");
  State state = state_from_json(util::json_field<nlohmann::json>(journal, "state", source),
                                source + ": state");
  try {
    complete_append(files, size, text);
    util::write_json_atomic(files.state(), to_json(state));
    util::write_file_atomic(files.performance(), render(state));
    util::remove_file(files.journal());
  } catch (const Error &e) {
    throw Error(std::string(e.what()) + "; while completing the interrupted record (" +
                what_was_recorded(line) + ") kept in " + source +
                ": fix the cause and run kopt again");
  }
  notes.push_back("completed the interrupted record (" + what_was_recorded(line) + ") from " +
                  source + ": state.json, attempts.jsonl and performance.md agree again");
  return notes;
}

} // namespace kopt::ledger
