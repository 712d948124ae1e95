#include "ir/target.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <sstream>

namespace kiln::ir {
namespace {

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

int ParsePositive(const std::string& key, const std::string& value, std::string_view text) {
  int v = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, v);
  if (ec != std::errc() || p != end || v <= 0) {
    throw TargetError(fmt::format("target '{}': option -{} needs a positive integer, got '{}'",
                                  text, key, value));
  }
  return v;
}

// "-mattr=+avx2,-fma,+avx2" -> sorted unique by feature name; the last sign wins.
std::vector<std::string> NormalizeFeatures(const std::string& value, std::string_view text) {
  std::map<std::string, char> sign;
  std::stringstream in(value);
  for (std::string f; std::getline(in, f, ',');) {
    if (f.empty()) continue;
    char s = '+';
    if (f[0] == '+' || f[0] == '-') {
      s = f[0];
      f = f.substr(1);
    }
    if (f.empty() || !std::all_of(f.begin(), f.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        })) {
      throw TargetError(fmt::format("target '{}': bad feature '{}' in -mattr", text, f));
    }
    sign[f] = s;
  }
  std::vector<std::string> out;
  for (const auto& [name, s] : sign) out.push_back(std::string(1, s) + name);
  return out;
}

}  // namespace

Target Target::Parse(std::string_view text) {
  std::vector<std::string> words = SplitWords(text);
  if (words.empty()) throw TargetError("empty target string: expected 'llvm ...' or 'cuda ...'");
  Target t;
  if (words[0] == "llvm" || words[0] == "cpu") {
    t.kind = Kind::kLLVM;
  } else if (words[0] == "cuda" || words[0] == "nvptx") {
    t.kind = Kind::kCUDA;
  } else if (words[0] == "host") {
    throw TargetError("target 'host' must be resolved to this machine first (codegen::ResolveTarget)");
  } else {
    throw TargetError(fmt::format("target '{}': unknown kind '{}' (expected 'llvm' or 'cuda')",
                                  text, words[0]));
  }
  std::map<std::string, bool> seen;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') {
      throw TargetError(fmt::format("target '{}': expected an option '-key=value', got '{}'", text, w));
    }
    std::string key, value;
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      key = w.substr(1);
      if (i + 1 >= words.size() || words[i + 1][0] == '-') {
        throw TargetError(fmt::format("target '{}': option -{} has no value", text, key));
      }
      value = words[++i];
    } else {
      key = w.substr(1, eq - 1);
      value = w.substr(eq + 1);
    }
    if (!key.empty() && key[0] == '-') key = key.substr(1);  // accept --key
    if (value.empty()) throw TargetError(fmt::format("target '{}': option -{} has no value", text, key));
    if (seen[key]) throw TargetError(fmt::format("target '{}': option -{} given twice", text, key));
    seen[key] = true;
    bool llvm = t.kind == Kind::kLLVM;
    if (llvm && key == "mcpu") {
      t.mcpu = value;
    } else if (llvm && key == "mtriple") {
      t.mtriple = value;
    } else if (llvm && key == "mattr") {
      t.mattr = NormalizeFeatures(value, text);
    } else if (llvm && key == "num-cores") {
      t.num_cores = ParsePositive(key, value, text);
    } else if (!llvm && key == "arch") {
      if (value.rfind("sm_", 0) != 0 || value.size() < 5 ||
          !std::all_of(value.begin() + 3, value.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) {
        throw TargetError(fmt::format("target '{}': -arch must look like sm_90, got '{}'", text, value));
      }
      t.arch = value;
    } else if (!llvm && key == "max_threads_per_block") {
      t.max_threads_per_block = ParsePositive(key, value, text);
    } else if (!llvm && key == "max_shared_memory_per_block") {
      t.max_shared_memory_per_block = ParsePositive(key, value, text);
    } else if (!llvm && key == "thread_warp_size") {
      t.thread_warp_size = ParsePositive(key, value, text);
    } else {
      throw TargetError(fmt::format("target '{}': unknown option -{} for kind '{}'", text, key,
                                    t.KindName()));
    }
  }
  if (t.kind == Kind::kCUDA && t.arch.empty()) {
    throw TargetError(fmt::format("target '{}': a cuda target needs -arch (e.g. -arch=sm_90)", text));
  }
  return t;
}

std::string Target::KindName() const { return kind == Kind::kLLVM ? "llvm" : "cuda"; }

std::string Target::ToString() const {
  std::string s = KindName();
  if (kind == Kind::kLLVM) {
    if (!mattr.empty()) {
      s += " -mattr=";
      for (size_t i = 0; i < mattr.size(); ++i) s += (i ? "," : "") + mattr[i];
    }
    if (!mcpu.empty()) s += " -mcpu=" + mcpu;
    if (!mtriple.empty()) s += " -mtriple=" + mtriple;
    if (num_cores > 0) s += fmt::format(" -num-cores={}", num_cores);
  } else {
    s += " -arch=" + arch;
    if (max_shared_memory_per_block > 0) s += fmt::format(" -max_shared_memory_per_block={}", max_shared_memory_per_block);
    if (max_threads_per_block > 0) s += fmt::format(" -max_threads_per_block={}", max_threads_per_block);
    if (thread_warp_size > 0) s += fmt::format(" -thread_warp_size={}", thread_warp_size);
  }
  return s;
}

bool Target::HasFeature(std::string_view feature) const {
  return std::find(mattr.begin(), mattr.end(), "+" + std::string(feature)) != mattr.end();
}

}  // namespace kiln::ir
