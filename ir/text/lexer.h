// Tokens of the TVMScript subset, with Python's indentation rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir::text {

enum class TokKind { kName, kInt, kFloat, kString, kOp, kNewline, kIndent, kDedent, kEnd };

struct Token {
  TokKind kind;
  std::string text;  // a name, the digits of a number, a decoded string, an operator
  int line = 0;
  int col = 0;
};

// Deeper indentation than this is refused: the parser recurses once per level.
inline constexpr int kMaxIndentLevels = 64;

// Splits `src` into tokens; throws ParseError (naming `file`) on text that is
// not a token, an unterminated string, or inconsistent indentation. Comments
// and blank lines vanish; newlines inside brackets are ignored.
std::vector<Token> Tokenize(std::string_view src, const std::string& file);

// A readable spelling of a token for messages: 'x', '(', end of line, ...
std::string Describe(const Token& t);

}  // namespace kiln::ir::text
