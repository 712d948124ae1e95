#include "ir/error.h"

namespace kiln::ir {

std::string SourceLoc::str() const {
  return (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(line) + ":" +
         std::to_string(col);
}

ParseError::ParseError(SourceLoc loc, const std::string& message)
    : std::runtime_error(loc.str() + ": error: " + message),
      loc_(std::move(loc)),
      message_(message) {}

}  // namespace kiln::ir
