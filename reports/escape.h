// Escaping for text placed in HTML or SVG (both parsed as XML-compatible markup).
#pragma once

#include <string>
#include <string_view>

namespace zinf::reports {

// Escapes & < > " ' as entities, replaces control characters that XML forbids
// (everything below 0x20 except tab, newline, carriage return) and invalid UTF-8
// bytes with U+FFFD, so the result is safe in element text and quoted attributes.
std::string HtmlEscape(std::string_view text);

// Number of Unicode code points in `text` (for text-width estimates).
size_t Utf8Length(std::string_view text);

// Truncates `text` to at most `max_chars` code points, ending in "…" when cut.
std::string Utf8Truncate(std::string_view text, size_t max_chars);

}  // namespace zinf::reports
