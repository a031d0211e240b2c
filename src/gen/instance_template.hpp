#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kopt::gen {

/// Replaces every `{{key}}` in `text` by its value from `values`. An unknown placeholder is a
/// kopt::Error `<source>:<line>: unknown placeholder '{{X}}' (known: a, b, ...)`.
std::string expand_template(const std::string &text,
                            const std::vector<std::pair<std::string, std::string>> &values,
                            const std::string &source);

} // namespace kopt::gen
