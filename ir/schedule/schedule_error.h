// The error every schedule primitive raises when its preconditions fail.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln::ir {

// what() reads "<primitive>: <what is wrong, naming the block/loop>", e.g.
// "reorder: loops i_1 and k_0 are not in one chain of nested loops".
class ScheduleError : public std::runtime_error {
 public:
  ScheduleError(std::string primitive, const std::string& message)
      : std::runtime_error(primitive + ": " + message),
        primitive_(std::move(primitive)),
        message_(message) {}
  const std::string& primitive() const { return primitive_; }
  const std::string& message() const { return message_; }

 private:
  std::string primitive_;
  std::string message_;
};

}  // namespace kiln::ir
