#include "ir/ndarray.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ir/error.h"

namespace kiln::ir {

namespace {

constexpr size_t kAlignment = 64;

// Under AddressSanitizer an array's storage is exactly nbytes() long, so that
// its redzone starts where the data ends: with the round-up to 64 bytes, a
// write one element past the end would land in padding that nothing checks
// (scripts/sanitize.sh's canary writes there).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kExactAllocation = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kExactAllocation = true;
#else
constexpr bool kExactAllocation = false;
#endif
#else
constexpr bool kExactAllocation = false;
#endif

// Rounds v to a binary format with `precision` significand bits (implicit bit
// included) whose smallest normal exponent is `min_exp`; magnitudes at or
// above `overflow` become infinity. Works on the exact double value, so the
// result is correctly rounded (nearest, ties to even).
double RoundToFormat(double v, int precision, int min_exp, double overflow) {
  if (!std::isfinite(v) || v == 0) return v;
  double a = std::fabs(v);
  if (a >= overflow) return std::copysign(std::numeric_limits<double>::infinity(), v);
  int e = std::ilogb(a);
  if (e < min_exp) e = min_exp;  // subnormal range: fixed quantum
  double quantum = std::ldexp(1.0, e - (precision - 1));
  double x = a / quantum;  // exact: scaling by a power of two
  double f = std::floor(x);
  double frac = x - f;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(f, 2.0) != 0)) f += 1;
  return std::copysign(f * quantum, v);
}

// float16: 11-bit significand, min normal 2^-14, max 65504; halfway to 2^16
// (65520) and beyond rounds to infinity.
constexpr double kHalfOverflow = 65520.0;
// bfloat16: 8-bit significand, float32's exponent range; max (2 - 2^-7) * 2^127,
// halfway to 2^128 is 511 * 2^119.
const double kBFloatOverflow = std::ldexp(511.0, 119);

}  // namespace

double RoundToFloat16(double v) { return RoundToFormat(v, 11, -14, kHalfOverflow); }

double RoundToBFloat16(double v) { return RoundToFormat(v, 8, -126, kBFloatOverflow); }

double RoundToFloatType(double v, DataType t) {
  if (t.is_bfloat()) return RoundToBFloat16(v);
  switch (t.bits()) {
    case 16:
      return RoundToFloat16(v);
    case 32:
      return static_cast<double>(static_cast<float>(v));
    default:
      return v;
  }
}

uint16_t DoubleToFloat16Bits(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return sign | 0x7E00;
  double r = RoundToFloat16(v);
  double a = std::fabs(r);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a < std::ldexp(1.0, -14)) {
    return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal (or zero)
  }
  int e = std::ilogb(a);
  auto mant = static_cast<uint16_t>((std::ldexp(a, -e) - 1.0) * 1024.0);
  return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}

double Float16BitsToDouble(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exp = (bits >> 10) & 0x1F;
  int mant = bits & 0x3FF;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) {
    return mant ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
                : sign * std::numeric_limits<double>::infinity();
  }
  return sign * std::ldexp(1024 + mant, exp - 25);
}

uint16_t DoubleToBFloat16Bits(double v) {
  if (std::isnan(v)) return std::signbit(v) ? 0xFFC0 : 0x7FC0;
  // The rounded value is exact in float32, whose top half is the bfloat16.
  auto f = static_cast<float>(RoundToBFloat16(v));
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
}

double BFloat16BitsToDouble(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

int64_t DoubleToIntSaturating(double v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;  // NaN != 0 holds, as in C
  if (std::isnan(v)) return 0;
  int bits = t.bits();
  if (t.is_int()) {
    double limit = std::ldexp(1.0, bits - 1);  // exact power of two
    if (v <= -limit)
      return bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    if (v >= limit)
      return bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    return static_cast<int64_t>(v);
  }
  if (t.is_uint()) {
    if (v <= 0) return 0;
    if (v >= std::ldexp(1.0, bits)) {
      return bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1);
    }
    return static_cast<int64_t>(static_cast<uint64_t>(v));
  }
  throw IRError("cannot convert a number to type " + t.str());
}

int64_t WrapToIntType(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  auto u = static_cast<uint64_t>(v);
  int shift = 64 - bits;
  if (t.is_int()) return static_cast<int64_t>(u << shift) >> shift;  // sign-extend
  return static_cast<int64_t>((u << shift) >> shift);
}

double IntToDouble(int64_t v, DataType t) {
  if (t.is_uint() && t.bits() == 64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

void NDArray::CheckFlat(int64_t flat) const {
  if (flat < 0 || flat >= size_) {
    throw IRError("NDArray: element " + std::to_string(flat) + " is out of range for shape " +
                  ShapeString());
  }
}

void NDArray::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

NDArray::NDArray(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  if (!dtype.is_scalar() || dtype.is_handle()) {
    throw IRError("NDArray: element type must be a scalar number type, got " + dtype.str());
  }
  size_ = 1;
  for (int64_t extent : shape_) {
    if (extent < 0) throw IRError("NDArray: negative extent in shape " + ShapeToString(shape_));
    size_ *= extent;
  }
  size_t bytes = (nbytes() + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes == 0) bytes = kAlignment;  // a valid pointer even when empty
  std::byte* p = nullptr;
  if (kExactAllocation) {
    // aligned_alloc wants a multiple of the alignment; posix_memalign does not.
    bytes = std::max<size_t>(nbytes(), 1);
    void* raw = nullptr;
    if (posix_memalign(&raw, kAlignment, bytes) == 0) p = static_cast<std::byte*>(raw);
  } else {
    p = static_cast<std::byte*>(std::aligned_alloc(kAlignment, bytes));
  }
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_.reset(p);
}

NDArray::NDArray(const NDArray& other) : dtype_(other.dtype_), shape_(other.shape_), size_(0) {
  if (!other.defined()) return;
  NDArray copy(other.dtype_, other.shape_);
  std::memcpy(copy.data(), other.data(), other.nbytes());
  *this = std::move(copy);
}

NDArray& NDArray::operator=(const NDArray& other) {
  if (this != &other) *this = NDArray(other);
  return *this;
}

double NDArray::GetAsDouble(int64_t flat) const {
  CheckFlat(flat);
  const std::byte* p = data_.get() + flat * dtype_.bytes();
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (dtype_.code()) {
    case DataType::Code::kBool:
      return load(uint8_t{}) != 0 ? 1.0 : 0.0;
    case DataType::Code::kBFloat:
      return BFloat16BitsToDouble(load(uint16_t{}));
    case DataType::Code::kFloat:
      switch (dtype_.bits()) {
        case 16:
          return Float16BitsToDouble(load(uint16_t{}));
        case 32:
          return load(float{});
        default:
          return load(double{});
      }
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      return IntToDouble(GetAsInt64(flat), dtype_);
    case DataType::Code::kHandle:
      break;
  }
  return 0;
}

int64_t NDArray::GetAsInt64(int64_t flat) const {
  CheckFlat(flat);
  if (dtype_.is_floating()) return DoubleToIntSaturating(GetAsDouble(flat), DataType::Int64());
  const std::byte* p = data_.get() + flat * dtype_.bytes();
  bool is_signed = dtype_.is_int();
  switch (dtype_.bytes()) {
    case 1: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      if (dtype_.is_bool()) return v != 0;
      return is_signed ? static_cast<int64_t>(static_cast<int8_t>(v)) : static_cast<int64_t>(v);
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return is_signed ? static_cast<int64_t>(static_cast<int16_t>(v)) : static_cast<int64_t>(v);
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return is_signed ? static_cast<int64_t>(static_cast<int32_t>(v)) : static_cast<int64_t>(v);
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void NDArray::SetFromDouble(int64_t flat, double v) {
  CheckFlat(flat);
  std::byte* p = data_.get() + flat * dtype_.bytes();
  auto store = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  if (dtype_.is_bfloat()) return store(DoubleToBFloat16Bits(v));
  if (dtype_.is_float()) {
    switch (dtype_.bits()) {
      case 16:
        return store(DoubleToFloat16Bits(v));
      case 32:
        return store(static_cast<float>(v));
      default:
        return store(v);
    }
  }
  SetFromInt64(flat, DoubleToIntSaturating(v, dtype_));
}

void NDArray::SetFromInt64(int64_t flat, int64_t v) {
  CheckFlat(flat);
  if (dtype_.is_floating()) return SetFromDouble(flat, IntToDouble(v, DataType::Int64()));
  std::byte* p = data_.get() + flat * dtype_.bytes();
  int64_t w = WrapToIntType(v, dtype_);
  switch (dtype_.bytes()) {
    case 1: {
      auto x = static_cast<uint8_t>(w);
      std::memcpy(p, &x, 1);
      break;
    }
    case 2: {
      auto x = static_cast<uint16_t>(w);
      std::memcpy(p, &x, 2);
      break;
    }
    case 4: {
      auto x = static_cast<uint32_t>(w);
      std::memcpy(p, &x, 4);
      break;
    }
    default:
      std::memcpy(p, &w, 8);
      break;
  }
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

std::string NDArray::ShapeString() const { return ShapeToString(shape_); }

std::string NDArray::IndexString(int64_t flat) const {
  std::vector<int64_t> index(shape_.size());
  for (size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] == 0) break;
    index[d] = flat % shape_[d];
    flat /= shape_[d];
  }
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(index[i]);
  }
  return s + "]";
}

uint64_t MixSeed(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void FillRandom(NDArray* a, uint64_t seed) {
  DataType t = a->dtype();
  int precision = 0;
  if (t.is_bfloat()) {
    precision = 8;
  } else if (t.is_float()) {
    precision = t.bits() == 16 ? 11 : t.bits() == 32 ? 24 : 53;
  }
  uint64_t state = seed;
  for (int64_t i = 0; i < a->size(); ++i) {
    state += 0x9E3779B97F4A7C15ull;  // splitmix64 step
    uint64_t x = MixSeed(state);
    if (precision > 0) {
      double k = static_cast<double>(x >> (64 - precision));
      a->SetFromDouble(i, std::ldexp(k, -(precision - 1)) - 1.0);
    } else if (t.is_bool()) {
      a->SetFromInt64(i, static_cast<int64_t>(x >> 63));
    } else if (t.is_int()) {
      a->SetFromInt64(i, static_cast<int64_t>(x >> 60) - 8);
    } else {
      a->SetFromInt64(i, static_cast<int64_t>(x >> 60));
    }
  }
}

std::vector<NDArray> MakeArgs(const PrimFunc& f) {
  std::vector<NDArray> args;
  args.reserve(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.params[i];
    std::vector<int64_t> shape;
    for (size_t d = 0; d < b.ndim(); ++d) {
      const auto* imm = b.shape()[d].as<IntImmNode>();
      if (imm == nullptr) {
        throw IRError("function '" + f.name + "': parameter " + std::to_string(i) + " (" +
                      b.name() + ") has a non-constant extent in dimension " + std::to_string(d) +
                      "; cannot allocate an argument for it");
      }
      shape.push_back(imm->value);
    }
    args.emplace_back(b.dtype(), std::move(shape));
  }
  return args;
}

std::vector<NDArray> MakeRandomArgs(const PrimFunc& f, uint64_t seed) {
  std::vector<NDArray> args = MakeArgs(f);
  for (size_t i = 0; i < args.size(); ++i) FillRandom(&args[i], seed ^ MixSeed(i + 1));
  return args;
}

}  // namespace kiln::ir
