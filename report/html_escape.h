// Text going into the report's HTML and SVG: trace scripts, programs,
// workload names and error messages are the user's data and may hold any
// character, so every one is escaped before it reaches markup.
#pragma once

#include <string>
#include <string_view>

namespace kiln::report {

// Escapes &, <, >, " and ' (valid in element text and in quoted attributes of
// both HTML and SVG/XML). Bytes that are not valid UTF-8 become U+FFFD so that
// the page stays well-formed whatever a record's message holds.
std::string HtmlEscape(std::string_view text);

}  // namespace kiln::report
