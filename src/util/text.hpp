#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::util {

/// Splits `text` at every `sep`; empty pieces are kept.
std::vector<std::string> split(std::string_view text, char sep);

/// Splits `text` at every `sep` outside parentheses ("fill(64x64,264),M" at ',' gives two
/// pieces); empty pieces are kept.
std::vector<std::string> split_outside_parens(std::string_view text, char sep);

/// Returns `text` without leading and trailing blanks.
std::string_view trim(std::string_view text);

/// Joins `parts` with `sep` between them.
std::string join(const std::vector<std::string> &parts, std::string_view sep);

/// True when `text` is a C identifier: [A-Za-z_][A-Za-z0-9_]*. No std::regex: libstdc++'s
/// recursive matcher overflows the stack on inputs of some 100 KB.
bool is_identifier(std::string_view text);

/// True when `text` is non-empty and every character is an ASCII digit.
bool is_digits(std::string_view text);

/// True when `text` is non-empty and every character is a hexadecimal digit.
bool is_hex(std::string_view text);

/// Returns `text` as is when short, else its first `limit` bytes and "... (N bytes)": for error
/// messages that quote an input of any size.
std::string excerpt(std::string_view text, size_t limit = 80);

/// Whether `text` holds a character that would not show as itself in a message: an ASCII or C1
/// control character (a newline, a tab, DEL...), a bidirectional control (U+202A-U+202E,
/// U+2066-U+2069, U+200E, U+200F, U+061C), a zero-width or line-separator character
/// (U+200B-U+200D, U+2028, U+2029, U+FEFF), or a byte that is not UTF-8.
bool has_hidden_characters(std::string_view text);

/// Returns `text` as is when has_hidden_characters() is false, else in double quotes with C-style
/// escapes (`\n`, `\t`, `\x7f`, `\u202e`, `\"`, `\\`): a name in a message that cannot
/// reorder or hide the rest of the line.
std::string quote_hidden(std::string_view text);

/// Joins the first `limit` of `items` with `sep`, then "and N more" when there are more: a list
/// in a message stays one line however many items a bad input holds.
std::string join_capped(const std::vector<std::string> &items, std::string_view sep,
                        size_t limit = 10);

/// Parses a whole decimal integer; thousands separators (",") are accepted. Throws
/// `<where>: expected an integer, got '<text>'`.
int64_t parse_int(std::string_view text, const std::string &where);

/// Parses a whole floating-point number; thousands separators are accepted. Throws
/// `<where>: expected a number, got '<text>'`.
double parse_double(std::string_view text, const std::string &where);

/// Formats a double with up to `digits` significant digits and no trailing noise.
std::string format_number(double value, int digits = 6);

/// Returns the current UTC time as ISO 8601 to the second ("2026-11-21T21:55:46Z"), the date
/// format of every file kopt writes.
std::string utc_now();

/// Returns the Levenshtein edit distance between two strings (for "did you mean" hints).
size_t edit_distance(std::string_view a, std::string_view b);

/// Whether nearest() tells letters apart by case.
enum class Case { exact, ignore };

/// Returns the candidate nearest to `word` when it is close enough to suggest, else "". With
/// Case::ignore, distances are of the lower-cased words ('k' is nearest to 'K', not to 'M').
std::string nearest(std::string_view word, const std::vector<std::string> &candidates,
                    Case letters = Case::exact);

} // namespace kopt::util
