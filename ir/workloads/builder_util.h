// Shared checks and shape arithmetic of the workload builders (internal).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln::ir::workloads {

// Throws std::invalid_argument "<op>: <what>" unless ok.
inline void Require(bool ok, const std::string& op, const std::string& what) {
  if (!ok) throw std::invalid_argument(op + ": " + what);
}

// Every named value must be positive.
inline void RequirePositive(const std::string& op,
                            std::initializer_list<std::pair<const char*, int64_t>> values) {
  for (const auto& [name, v] : values) {
    Require(v > 0, op, std::string(name) + " must be positive, got " + std::to_string(v));
  }
}

// Python's // on integers.
inline int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// Output extent of a strided, dilated, padded window; must come out positive.
inline int64_t ConvOutDim(const std::string& op, int64_t in, int64_t kernel, int64_t stride,
                          int64_t padding, int64_t dilation) {
  int64_t out = FloorDivInt(in + 2 * padding - dilation * (kernel - 1) - 1, stride) + 1;
  Require(out > 0, op,
          "the kernel does not fit the padded input (output extent " + std::to_string(out) + ")");
  return out;
}

}  // namespace kiln::ir::workloads
