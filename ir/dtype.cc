#include "ir/dtype.h"

#include <charconv>

namespace kiln::ir {

std::string DataType::str() const {
  std::string s;
  switch (code_) {
    case Code::kBool: s = "bool"; break;
    case Code::kInt: s = "int" + std::to_string(bits_); break;
    case Code::kUInt: s = "uint" + std::to_string(bits_); break;
    case Code::kFloat: s = "float" + std::to_string(bits_); break;
    case Code::kBFloat: s = "bfloat" + std::to_string(bits_); break;
    case Code::kHandle: return "handle";
  }
  if (lanes_ > 1) s += "x" + std::to_string(lanes_);
  return s;
}

namespace {

bool ParseNumber(std::string_view t, int* out) {
  if (t.empty()) return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && p == t.data() + t.size() && *out > 0;
}

}  // namespace

bool DataType::Parse(std::string_view text, DataType* out) {
  if (text == "handle") {
    *out = Handle();
    return true;
  }
  int lanes = 1;
  std::string_view base = text;
  if (auto x = text.find('x'); x != std::string_view::npos) {
    if (!ParseNumber(text.substr(x + 1), &lanes) || lanes > 65535) return false;
    base = text.substr(0, x);
  }
  struct Prefix {
    std::string_view name;
    Code code;
  };
  // Longest prefixes first so "bfloat" is not read as "float".
  static constexpr Prefix kPrefixes[] = {{"bfloat", Code::kBFloat}, {"float", Code::kFloat},
                                         {"uint", Code::kUInt},     {"int", Code::kInt}};
  if (base == "bool") {
    *out = Bool(lanes);
    return true;
  }
  for (const auto& p : kPrefixes) {
    if (base.substr(0, p.name.size()) != p.name) continue;
    int bits = 0;
    if (!ParseNumber(base.substr(p.name.size()), &bits)) return false;
    bool ok = false;
    switch (p.code) {
      case Code::kInt:
      case Code::kUInt: ok = bits == 8 || bits == 16 || bits == 32 || bits == 64; break;
      case Code::kFloat: ok = bits == 16 || bits == 32 || bits == 64; break;
      case Code::kBFloat: ok = bits == 16; break;
      default: break;
    }
    if (!ok) return false;
    *out = DataType(p.code, bits, lanes);
    return true;
  }
  return false;
}

}  // namespace kiln::ir
