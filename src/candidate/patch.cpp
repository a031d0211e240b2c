#include "candidate/patch.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <cstdlib>

namespace kopt::candidate {

namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// Reads a C-quoted path ("a/x\tb", git's quoting of unusual names) starting at text[0] == '"';
// `consumed` gets the characters read, quotes included.
std::string unquote(std::string_view text, size_t &consumed, const std::string &where) {
  std::string out;
  size_t i = 1;
  while (i < text.size() && text[i] != '"') {
    char c = text[i++];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= text.size()) {
      break;
    }
    char e = text[i++];
    if (e >= '0' && e <= '7') {
      int value = e - '0';
      for (int k = 0; k < 2 && i < text.size() && text[i] >= '0' && text[i] <= '7'; ++k) {
        value = value * 8 + (text[i++] - '0');
      }
      out += static_cast<char>(value);
    } else {
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    }
  }
  if (i >= text.size()) {
    throw Error(where + ": unterminated quoted path: " + util::quote_hidden(util::excerpt(text)));
  }
  consumed = i + 1;
  return out;
}

// git writes a/ and b/ (or the mnemonic i/ w/ c/ o/) in front of every path.
std::string strip_git_prefix(const std::string &path) {
  if (path.size() > 2 && path[1] == '/' &&
      std::string_view("abciow").find(path[0]) != std::string_view::npos) {
    return path.substr(2);
  }
  return path;
}

// The path of a "--- " or "+++ " line: up to a tab (diff -u appends the date), unquoted; "" for
// /dev/null.
std::string header_path(std::string_view rest, const std::string &where) {
  std::string path;
  if (!rest.empty() && rest[0] == '"') {
    size_t consumed = 0;
    path = unquote(rest, consumed, where);
  } else {
    path = std::string(rest.substr(0, rest.find('\t')));
    while (!path.empty() && (path.back() == ' ' || path.back() == '\r')) {
      path.pop_back();
    }
  }
  return path == "/dev/null" ? "" : path;
}

// The two paths of "diff --git a/X b/Y" (used when no ---/+++ lines follow: binary, mode only).
std::pair<std::string, std::string> git_line_paths(std::string_view rest,
                                                   const std::string &where) {
  if (!rest.empty() && rest[0] == '"') {
    size_t consumed = 0;
    std::string a = unquote(rest, consumed, where);
    std::string_view tail = rest.substr(std::min(consumed + 1, rest.size()));
    size_t more = 0;
    std::string b =
        !tail.empty() && tail[0] == '"' ? unquote(tail, more, where) : std::string(tail);
    return {a, b};
  }
  // Same name on both sides (the usual case): "a/X b/X", split in the middle.
  size_t mid = rest.size() / 2;
  if (rest.size() % 2 == 1 && rest[mid] == ' ' &&
      strip_git_prefix(std::string(rest.substr(0, mid))) ==
          strip_git_prefix(std::string(rest.substr(mid + 1)))) {
    return {std::string(rest.substr(0, mid)), std::string(rest.substr(mid + 1))};
  }
  size_t space = rest.find(" b/");
  if (space == std::string_view::npos) {
    throw Error(where + ": expected 'diff --git a/<path> b/<path>', got 'diff --git " +
                util::quote_hidden(util::excerpt(rest)) + "'");
  }
  return {std::string(rest.substr(0, space)), std::string(rest.substr(space + 1))};
}

int hunk_count(std::string_view range, const std::string &where, std::string_view header) {
  size_t comma = range.find(',');
  if (comma == std::string_view::npos) {
    return 1;
  }
  std::string digits(range.substr(comma + 1));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw Error(where + ": hunk header: expected '@@ -a,b +c,d @@', got '" +
                util::quote_hidden(util::excerpt(header)) + "'");
  }
  return std::atoi(digits.c_str());
}

class Reader {
public:
  Reader(std::string_view text, std::string source)
      : lines_(lines_of(text)), source_(std::move(source)) {}

  std::vector<PatchFile> read() {
    std::vector<PatchFile> files;
    while (at_ < lines_.size()) {
      std::string_view line = lines_[at_];
      if (line.starts_with("diff --git ")) {
        files.push_back(git_section());
      } else if (line.starts_with("--- ") && at_ + 1 < lines_.size() &&
                 lines_[at_ + 1].starts_with("+++ ")) {
        files.push_back(plain_section());
      } else {
        ++at_; // a commit message, a signature, "Only in ..." lines
      }
    }
    return files;
  }

private:
  std::string where() const { return source_ + ":" + std::to_string(at_ + 1); }

  PatchFile git_section() {
    PatchFile f;
    f.line = static_cast<int>(at_ + 1);
    auto [a, b] = git_line_paths(lines_[at_].substr(11), where());
    f.old_path = strip_git_prefix(a);
    f.new_path = strip_git_prefix(b);
    ++at_;
    while (at_ < lines_.size()) {
      std::string_view line = lines_[at_];
      if (line.starts_with("diff --git ")) {
        break;
      }
      if (line.starts_with("@@")) {
        hunks(f);
        if (at_ < lines_.size() && !lines_[at_].starts_with("@@")) {
          break; // the section's text ends with its last hunk
        }
        continue;
      }
      if (line.starts_with("GIT binary patch")) {
        f.binary = true;
        while (at_ < lines_.size() && !lines_[at_].starts_with("diff --git ")) {
          ++at_;
        }
        break;
      }
      header_line(f, line);
      ++at_;
    }
    return f;
  }

  void header_line(PatchFile &f, std::string_view line) {
    auto rest = [&](std::string_view key) { return std::string(line.substr(key.size())); };
    if (line.starts_with("new file mode ")) {
      f.new_mode = rest("new file mode ");
      f.old_path.clear();
    } else if (line.starts_with("deleted file mode ")) {
      f.new_path.clear();
    } else if (line.starts_with("new mode ")) {
      f.new_mode = rest("new mode ");
    } else if (line.starts_with("rename from ") || line.starts_with("rename to ")) {
      f.renamed = true;
    } else if (line.starts_with("copy from ") || line.starts_with("copy to ")) {
      f.copied = true;
    } else if (line.starts_with("--- ")) {
      f.old_path = strip_git_prefix(header_path(line.substr(4), where()));
    } else if (line.starts_with("+++ ")) {
      f.new_path = strip_git_prefix(header_path(line.substr(4), where()));
    } else if (line.starts_with("Binary files ")) {
      f.binary = true;
    }
  }

  PatchFile plain_section() {
    PatchFile f;
    f.line = static_cast<int>(at_ + 1);
    std::string old_path = header_path(lines_[at_].substr(4), where());
    ++at_;
    std::string new_path = header_path(lines_[at_].substr(4), where());
    ++at_;
    // `diff -u a/x b/x` and git's output carry a/ b/; a plain `diff -u x.orig x` does not.
    bool prefixed = new_path.starts_with("b/") && (old_path.empty() || old_path.starts_with("a/"));
    f.old_path = prefixed && !old_path.empty() ? old_path.substr(2) : old_path;
    f.new_path = prefixed ? new_path.substr(2) : new_path;
    if (at_ >= lines_.size() || !lines_[at_].starts_with("@@")) {
      throw Error(where() + ": expected a hunk ('@@ -a,b +c,d @@') after the '+++' line");
    }
    while (at_ < lines_.size() && lines_[at_].starts_with("@@")) {
      hunks(f);
    }
    return f;
  }

  // One hunk: its header and exactly the lines its counts promise.
  void hunks(PatchFile &f) {
    std::string_view header = lines_[at_];
    size_t minus = header.find(" -");
    size_t plus = header.find(" +", minus == std::string_view::npos ? 0 : minus);
    size_t close = header.find(" @@", plus == std::string_view::npos ? 0 : plus);
    if (minus == std::string_view::npos || plus == std::string_view::npos ||
        close == std::string_view::npos) {
      throw Error(where() + ": hunk header: expected '@@ -a,b +c,d @@', got '" +
                  util::quote_hidden(util::excerpt(header)) + "'");
    }
    int old_left = hunk_count(header.substr(minus + 2, plus - minus - 2), where(), header);
    int new_left = hunk_count(header.substr(plus + 2, close - plus - 2), where(), header);
    size_t start = at_;
    ++at_;
    while (old_left > 0 || new_left > 0) {
      if (at_ >= lines_.size()) {
        throw Error(source_ + ":" + std::to_string(start + 1) + ": hunk ends early: expected " +
                    std::to_string(old_left) + " more old and " + std::to_string(new_left) +
                    " more new lines");
      }
      std::string_view line = lines_[at_];
      char c = line.empty() ? ' ' : line[0];
      if (c == ' ') {
        --old_left;
        --new_left;
      } else if (c == '-') {
        --old_left;
      } else if (c == '+') {
        --new_left;
      } else if (c != '\\') {
        throw Error(where() + ": hunk line: expected ' ', '-', '+' or '\\', got '" +
                    util::quote_hidden(util::excerpt(line)) + "'");
      }
      if (old_left < 0 || new_left < 0) {
        throw Error(where() + ": hunk is longer than its header '" +
                    util::quote_hidden(util::excerpt(header)) + "'");
      }
      ++at_;
    }
    if (at_ < lines_.size() && lines_[at_].starts_with("\\")) {
      ++at_; // "\ No newline at end of file" after the last line
    }
    for (size_t i = start; i < at_; ++i) {
      f.hunks.append(lines_[i]);
      f.hunks += '\n';
    }
  }

  std::vector<std::string_view> lines_;
  std::string source_;
  size_t at_ = 0;
};

std::string quoted(const std::string &prefix, const std::string &path) {
  std::string full = prefix + path;
  if (full.find_first_of(" \t\"\\\n") == std::string::npos) {
    return full;
  }
  std::string out = "\"";
  for (char c : full) {
    out += c == '"' || c == '\\' ? std::string("\\") + c
           : c == '\t'           ? std::string("\\t")
           : c == '\n'           ? std::string("\\n")
                                 : std::string(1, c);
  }
  return out + "\"";
}

} // namespace

std::vector<PatchFile> parse_patch(std::string_view text, const std::string &source) {
  return Reader(text, source).read();
}

std::string rewrite_patch(const PatchFile &file, const std::string &path) {
  std::string out = "diff --git " + quoted("a/", path) + " " + quoted("b/", path) + "\n";
  if (file.old_path.empty()) {
    out +=
        "new file mode " + (file.new_mode.empty() ? std::string("100644") : file.new_mode) + "\n";
  }
  out += "--- " + (file.old_path.empty() ? std::string("/dev/null") : quoted("a/", path)) + "\n";
  out += "+++ " + quoted("b/", path) + "\n";
  return out + file.hunks;
}

} // namespace kopt::candidate
