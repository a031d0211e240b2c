#include "gen/text_template.hpp"

#include "gen/builtin_templates.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <set>

namespace kopt::gen {

namespace {

// One `{{...}}` of a template: a placeholder (kind 0) or a section tag ('#', '^', '/').
struct Tag {
  char kind = 0;
  std::string key;
  int line = 0;
  size_t begin = 0; ///< where the text it replaces starts
  size_t end = 0;   ///< past it: a standalone section tag takes its line's newline too
};

std::string spelled(char kind, const std::string &key) {
  return "'{{" + (kind == 0 ? std::string() : std::string(1, kind)) + key + "}}'";
}

std::vector<Tag> scan(const std::string &text, const std::string &source) {
  std::vector<Tag> tags;
  int line = 1;
  size_t scanned = 0;
  while (true) {
    size_t open = text.find("{{", scanned);
    if (open == std::string::npos) {
      return tags;
    }
    line += static_cast<int>(std::count(text.begin() + scanned, text.begin() + open, '\n'));
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos || close > text.find('\n', open)) {
      throw Error(source + ":" + std::to_string(line) + ": unterminated placeholder '{{'");
    }
    Tag tag{0, std::string(util::trim(std::string_view(text).substr(open + 2, close - open - 2))),
            line, open, close + 2};
    if (!tag.key.empty() && (tag.key[0] == '#' || tag.key[0] == '^' || tag.key[0] == '/')) {
      tag.kind = tag.key[0];
      tag.key = std::string(util::trim(std::string_view(tag.key).substr(1)));
      bool line_start = open == 0 || text[open - 1] == '\n';
      if (line_start && tag.end < text.size() && text[tag.end] == '\n') {
        ++tag.end;
      }
    }
    scanned = close + 2;
    tags.push_back(std::move(tag));
  }
}

// An open section: its tag and whether its text is written.
struct Section {
  const Tag *tag;
  bool visible;
};

} // namespace

std::string expand_template(const std::string &text, const TemplateValues &values,
                            const std::string &source, UnusedValues unused) {
  std::string out;
  std::vector<Section> open;
  std::set<std::string> named;
  size_t pos = 0;
  std::vector<Tag> tags = scan(text, source);
  for (const Tag &tag : tags) {
    const bool visible = open.empty() || open.back().visible;
    if (visible) {
      out.append(text, pos, tag.begin - pos);
    }
    pos = tag.end;
    std::string where = source + ":" + std::to_string(tag.line) + ": ";
    if (tag.kind == '/') {
      if (open.empty() || open.back().tag->key != tag.key) {
        throw Error(where + spelled(tag.kind, tag.key) + " closes no open section" +
                    (open.empty()
                         ? std::string()
                         : " (open: " + spelled(open.back().tag->kind, open.back().tag->key) +
                               " of line " + std::to_string(open.back().tag->line) + ")"));
      }
      open.pop_back();
      continue;
    }
    auto it = std::find_if(values.begin(), values.end(),
                           [&](const auto &value) { return value.first == tag.key; });
    if (it == values.end()) {
      std::vector<std::string> known;
      for (const auto &value : values) {
        known.push_back(value.first);
      }
      throw Error(where + "unknown placeholder " + spelled(tag.kind, tag.key) +
                  " (known: " + util::join(known, ", ") + ")");
    }
    named.insert(tag.key);
    if (tag.kind == 0) {
      if (visible) {
        out += it->second;
      }
    } else {
      const bool shown = tag.kind == '#' ? !it->second.empty() : it->second.empty();
      open.push_back({&tag, visible && shown});
    }
  }
  if (!open.empty()) {
    throw Error(source + ":" + std::to_string(open.back().tag->line) + ": section " +
                spelled(open.back().tag->kind, open.back().tag->key) + " is not closed");
  }
  out.append(text, pos, std::string::npos);
  if (unused == UnusedValues::error) {
    for (const auto &value : values) {
      if (!named.count(value.first)) {
        throw Error(source + ": value '" + value.first + "' fills no placeholder");
      }
    }
  }
  return out;
}

const std::string &builtin_template(std::string_view name) {
  const auto &templates = builtin_templates();
  auto it = templates.find(name);
  if (it == templates.end()) {
    throw Error("templates/" + std::string(name) + ": no such built-in template");
  }
  return it->second;
}

std::string expand_builtin(std::string_view name, const TemplateValues &values) {
  return expand_template(builtin_template(name), values, "templates/" + std::string(name),
                         UnusedValues::error);
}

} // namespace kopt::gen
