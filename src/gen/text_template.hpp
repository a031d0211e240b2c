#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kopt::gen {

/// A template's values, in the order an unknown placeholder's message lists them.
using TemplateValues = std::vector<std::pair<std::string, std::string>>;

/// Whether a value that fills no placeholder of the template is an error.
enum class UnusedValues { allowed, error };

/// Expands a template: `{{key}}` becomes its value; `{{#key}}...{{/key}}` is kept only when the
/// value is not empty, `{{^key}}...{{/key}}` only when it is; a line holding nothing but a
/// section tag disappears with its newline. Errors are kopt::Error naming `<source>:<line>`:
/// an unknown placeholder `unknown placeholder '{{X}}' (known: a, b, ...)`, an unterminated `{{`,
/// an unbalanced section; with UnusedValues::error, a value no placeholder names
/// (`<source>: value 'x' fills no placeholder`).
std::string expand_template(const std::string &text, const TemplateValues &values,
                            const std::string &source, UnusedValues unused = UnusedValues::allowed);

/// The text of one of kopt's own templates (templates/<name> in the source tree, embedded in the
/// binary at build time); an unknown name is a kopt::Error.
const std::string &builtin_template(std::string_view name);

/// Expands kopt's own template `name`, where every value must fill a placeholder.
std::string expand_builtin(std::string_view name, const TemplateValues &values);

} // namespace kopt::gen
