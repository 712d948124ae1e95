// Dense host tensors, deterministic random inputs, and the low-precision float
// conversions the reference interpreter and the correctness checks share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/prim_func.h"

namespace kiln::ir {

// Round-to-nearest-even conversions between double and the 16-bit formats.
// Rounding goes straight from double (no intermediate float), so there is no
// double rounding. NaN keeps its sign and becomes a quiet NaN.
uint16_t DoubleToFloat16Bits(double v);
double Float16BitsToDouble(uint16_t bits);
uint16_t DoubleToBFloat16Bits(double v);
double BFloat16BitsToDouble(uint16_t bits);
// v rounded to the nearest value of the format (as a double).
double RoundToFloat16(double v);
double RoundToBFloat16(double v);
// v rounded to the scalar float type t (float16/bfloat16/float32/float64).
double RoundToFloatType(double v, DataType t);

// C-style conversion of v to the integer or bool type t, without undefined
// behaviour: truncates toward zero, saturates at t's range, NaN becomes 0.
// The result is t's value in int64 form (uint64 as its bit pattern).
int64_t DoubleToIntSaturating(double v, DataType t);
// v reduced to t's bit width: sign-extended for signed types, zero-extended
// for unsigned ones, 0/1 for bool.
int64_t WrapToIntType(int64_t v, DataType t);
// The int64 form of an integer value of type t as a double (uint64 unsigned).
double IntToDouble(int64_t v, DataType t);

// A dense, row-major host tensor of one scalar dtype. Storage is 64-byte
// aligned. Copies are deep (value semantics); moves are cheap.
class NDArray {
 public:
  NDArray() = default;
  // Zero-filled. dtype must be a scalar non-handle type; extents must be >= 0.
  NDArray(DataType dtype, std::vector<int64_t> shape);
  NDArray(const NDArray& other);
  NDArray& operator=(const NDArray& other);
  NDArray(NDArray&&) noexcept = default;
  NDArray& operator=(NDArray&&) noexcept = default;

  bool defined() const { return data_ != nullptr; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t ndim() const { return shape_.size(); }
  int64_t size() const { return size_; }  // number of elements
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_.bytes(); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* data_as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data());
  }

  // Element access by row-major flat offset; an offset outside [0, size())
  // throws IRError.
  // Element `flat` as a double; any dtype. uint64 values above
  // 2^53 lose precision: use GetAsInt64 for exact integers.
  double GetAsDouble(int64_t flat) const;
  // Stores v converted to the dtype: floats round to nearest even; integers
  // truncate toward zero and saturate at the type's range (NaN becomes 0);
  // bool stores v != 0.
  void SetFromDouble(int64_t flat, double v);
  // Exact integer access (uint64 as its two's-complement bit pattern; floats
  // truncate and saturate as in SetFromDouble).
  int64_t GetAsInt64(int64_t flat) const;
  void SetFromInt64(int64_t flat, int64_t v);

  NDArray Clone() const { return *this; }

  // "(128, 128)"; "()" for a scalar.
  std::string ShapeString() const;
  // "[3, 17]": the multi-index of a flat offset.
  std::string IndexString(int64_t flat) const;

 private:
  void CheckFlat(int64_t flat) const;
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  DataType dtype_ = DataType::Float32();
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  std::unique_ptr<std::byte[], FreeDeleter> data_;
};

// "(128, 128)"
std::string ShapeToString(const std::vector<int64_t>& shape);

// Fills `a` with a deterministic, platform-independent pattern from `seed`
// (splitmix64, one draw per element, in row-major order):
//   floats: k * 2^-(p-1) - 1 with k uniform in [0, 2^p), p the format's
//           precision (53, 24, 11, 8), so every value lies in [-1, 1) and is
//           exactly representable;
//   signed ints: uniform in [-8, 8); unsigned ints: [0, 16); bool: 0 or 1.
void FillRandom(NDArray* a, uint64_t seed);

// splitmix64's output function: a fixed 64-bit mix.
uint64_t MixSeed(uint64_t x);

// One zero-filled NDArray per parameter of f, in order. Every parameter shape
// must be constant; otherwise IRError names the parameter and dimension.
std::vector<NDArray> MakeArgs(const PrimFunc& f);
// Like MakeArgs, then parameter i is filled by FillRandom(seed ^ MixSeed(i + 1)).
std::vector<NDArray> MakeRandomArgs(const PrimFunc& f, uint64_t seed);

}  // namespace kiln::ir
