// Scalar and vector element types of the Kiln IR.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir {

// A data type: a code, a bit width and a lane count (lanes > 1 is a vector).
// The text spelling follows TVM: "float32", "int64", "bool", "float32x8".
class DataType {
 public:
  enum class Code : uint8_t { kInt, kUInt, kFloat, kBFloat, kBool, kHandle };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)),
        lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType Bool(int lanes = 1) { return {Code::kBool, 1, lanes}; }
  static constexpr DataType Int(int bits, int lanes = 1) { return {Code::kInt, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {Code::kUInt, bits, lanes}; }
  static constexpr DataType Float(int bits, int lanes = 1) { return {Code::kFloat, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {Code::kBFloat, 16, lanes}; }
  static constexpr DataType Handle() { return {Code::kHandle, 64, 1}; }
  static constexpr DataType Int32() { return Int(32); }
  static constexpr DataType Int64() { return Int(64); }
  static constexpr DataType Float32() { return Float(32); }
  static constexpr DataType Float64() { return Float(64); }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  // Size of one lane in bytes (bool occupies one byte in memory).
  constexpr int bytes() const { return code_ == Code::kBool ? 1 : (bits_ + 7) / 8; }

  constexpr bool is_bool() const { return code_ == Code::kBool; }
  constexpr bool is_int() const { return code_ == Code::kInt; }
  constexpr bool is_uint() const { return code_ == Code::kUInt; }
  // Any integer type: signed or unsigned (not bool).
  constexpr bool is_integer() const { return is_int() || is_uint(); }
  constexpr bool is_float() const { return code_ == Code::kFloat; }
  constexpr bool is_bfloat() const { return code_ == Code::kBFloat; }
  // float or bfloat.
  constexpr bool is_floating() const { return is_float() || is_bfloat(); }
  constexpr bool is_handle() const { return code_ == Code::kHandle; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  constexpr DataType element_of() const { return {code_, bits_, 1}; }
  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  constexpr bool operator==(const DataType&) const = default;

  // "float32", "int8", "bool", "float16x4", ...
  std::string str() const;
  // Parses the spelling written by str(); returns false on unknown text.
  static bool Parse(std::string_view text, DataType* out);

 private:
  Code code_ = Code::kInt;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

}  // namespace kiln::ir
