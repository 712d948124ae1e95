#include "ir/text/lexer.h"

#include <cstring>

#include "ir/error.h"

namespace kiln::ir::text {

namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& file) : src_(src), file_(file) {}

  std::vector<Token> Run() {
    indents_.push_back(0);
    bool line_start = true;
    while (pos_ < src_.size()) {
      if (line_start && depth_ == 0) {
        line_start = false;
        Indentation();
        continue;  // the line may have ended (or the input) after the indentation
      }
      char c = src_[pos_];
      if (c == '\n') {
        if (depth_ == 0 && !out_.empty() && out_.back().kind != TokKind::kNewline &&
            out_.back().kind != TokKind::kIndent && out_.back().kind != TokKind::kDedent) {
          Push(TokKind::kNewline, "", line_, col_);
        }
        Advance();
        line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        Advance();
        continue;
      }
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') Advance();
        continue;
      }
      if (c == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') {
        Advance();
        Advance();
        continue;
      }
      Lex();
    }
    // An unclosed bracket is left to the parser, which names what it expected.
    if (!out_.empty() && out_.back().kind != TokKind::kNewline &&
        out_.back().kind != TokKind::kDedent) {
      Push(TokKind::kNewline, "", line_, col_);
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      Push(TokKind::kDedent, "", line_, col_);
    }
    Push(TokKind::kEnd, "", line_, col_);
    return std::move(out_);
  }

 private:
  [[noreturn]] void Fail(int line, int col, const std::string& msg) {
    throw ParseError(SourceLoc{file_, line, col}, msg);
  }
  void Advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void Push(TokKind k, std::string text, int line, int col) {
    out_.push_back(Token{k, std::move(text), line, col});
  }

  // Measures the indentation of a new logical line and emits INDENT/DEDENT.
  // Blank and comment-only lines emit nothing.
  void Indentation() {
    int width = 0;
    size_t p = pos_;
    while (p < src_.size() &&
           (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\r' || src_[p] == '\f')) {
      if (src_[p] == '\t') {
        Fail(line_, static_cast<int>(p - pos_) + 1, "tabs are not allowed in indentation");
      }
      if (src_[p] == ' ') ++width;
      ++p;
    }
    if (p >= src_.size() || src_[p] == '\n' || src_[p] == '#') {
      while (pos_ < p) Advance();
      return;
    }
    while (pos_ < p) Advance();
    if (width > indents_.back()) {
      if (static_cast<int>(indents_.size()) > kMaxIndentLevels) {
        Fail(line_, col_, "too many indentation levels");
      }
      indents_.push_back(width);
      Push(TokKind::kIndent, "", line_, col_);
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        Push(TokKind::kDedent, "", line_, col_);
      }
      if (width != indents_.back()) {
        Fail(line_, col_, "inconsistent indentation: this line matches no outer indentation level");
      }
    }
  }

  void Lex() {
    int line = line_, col = col_;
    char c = src_[pos_];
    if (IsNameStart(c)) {
      size_t start = pos_;
      while (pos_ < src_.size() && (IsNameStart(src_[pos_]) || IsDigit(src_[pos_]))) Advance();
      Push(TokKind::kName, std::string(src_.substr(start, pos_ - start)), line, col);
      return;
    }
    if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]))) {
      Number(line, col);
      return;
    }
    if (c == '"' || c == '\'') {
      String(line, col);
      return;
    }
    static const char* kOps2[] = {"//", "<=", ">=", "==", "!=", "->", "+=", "-=", "*="};
    for (const char* op : kOps2) {
      if (src_.substr(pos_, 2) == op) {
        Advance();
        Advance();
        Push(TokKind::kOp, op, line, col);
        return;
      }
    }
    if (std::strchr("()[]{},:.=+-*/%<>@", c) != nullptr && c != '\0') {
      if (c == '(' || c == '[' || c == '{') ++depth_;
      if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
      Advance();
      Push(TokKind::kOp, std::string(1, c), line, col);
      return;
    }
    if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) {
      Fail(line, col, std::string("unexpected character '") + c + "'");
    }
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", static_cast<unsigned char>(c));
    Fail(line, col, std::string("unexpected byte ") + hex);
  }

  void Number(int line, int col) {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      is_float = true;
      Advance();
      while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      is_float = true;
      Advance();
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) Advance();
      if (pos_ >= src_.size() || !IsDigit(src_[pos_])) {
        Fail(line_, col_, "expected digits in the exponent of a number");
      }
      while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
    }
    if (pos_ < src_.size() && (IsNameStart(src_[pos_]))) {
      Fail(line_, col_, "invalid character '" + std::string(1, src_[pos_]) + "' in a number");
    }
    Push(is_float ? TokKind::kFloat : TokKind::kInt, std::string(src_.substr(start, pos_ - start)),
         line, col);
  }

  void String(int line, int col) {
    char quote = src_[pos_];
    Advance();
    std::string value;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') Fail(line, col, "unterminated string literal");
      char c = src_[pos_];
      if (c == quote) {
        Advance();
        break;
      }
      if (c != '\\') {
        value += c;
        Advance();
        continue;
      }
      Advance();
      if (pos_ >= src_.size()) Fail(line, col, "unterminated string literal");
      char e = src_[pos_];
      int eline = line_, ecol = col_;
      Advance();
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '0':
          value += '\0';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case 'x': {
          int v = 0;
          for (int i = 0; i < 2; ++i) {
            char h = pos_ < src_.size() ? src_[pos_] : '\0';
            int d = IsDigit(h)               ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                             : -1;
            if (d < 0) Fail(eline, ecol - 1, "invalid \\x escape: expected two hex digits");
            v = v * 16 + d;
            Advance();
          }
          value += static_cast<char>(v);
          break;
        }
        default:
          Fail(eline, ecol - 1, std::string("unknown escape sequence '\\") + e + "'");
      }
    }
    Push(TokKind::kString, std::move(value), line, col);
  }

  std::string_view src_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  int depth_ = 0;  // open brackets: newlines inside do not end a line
  std::vector<int> indents_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view src, const std::string& file) {
  return Lexer(src, file).Run();
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case TokKind::kName:
    case TokKind::kInt:
    case TokKind::kFloat:
    case TokKind::kOp:
      return "'" + t.text + "'";
    case TokKind::kString:
      return "a string";
    case TokKind::kNewline:
      return "end of line";
    case TokKind::kIndent:
      return "an indented block";
    case TokKind::kDedent:
      return "the end of an indented block";
    case TokKind::kEnd:
      return "end of input";
  }
  return "?";
}

}  // namespace kiln::ir::text
