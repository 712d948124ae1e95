// Error types thrown by the IR layer.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln::ir {

// Ill-typed or malformed IR built through the C++ API.
class IRError : public std::runtime_error {
 public:
  explicit IRError(const std::string& msg) : std::runtime_error(msg) {}
};

// A position in a text file; line and column start at 1.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string str() const;  // "file:line:col"
};

// Text that does not parse. what() is "file:line:col: error: message".
class ParseError : public std::runtime_error {
 public:
  ParseError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

}  // namespace kiln::ir
