#include "config/json_location.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kiln::config {
namespace {

// One step of a path: an object key, or an array index (key empty).
struct Step {
  std::string key;
  int index = -1;
};

std::string Fold(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<Step> ParsePath(const std::string& path) {
  std::vector<Step> steps;
  std::string name;
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '.' || c == '[') {
      if (!name.empty()) steps.push_back({Fold(name), -1});
      name.clear();
      if (c == '[') {
        const size_t close = path.find(']', i);
        if (close == std::string::npos) break;
        steps.push_back({"", std::atoi(path.substr(i + 1, close - i - 1).c_str())});
        i = close;
      }
    } else {
      name += c;
    }
  }
  if (!name.empty()) steps.push_back({Fold(name), -1});
  return steps;
}

struct Frame {
  bool array = false;
  int index = 0;
  std::string key;         // the object's current key (folded)
  bool expect_key = true;  // an object frame before its next key
};

}  // namespace

int LineOfOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(),
                                         text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

int LineOfJsonPath(std::string_view text, const std::string& path) {
  const std::vector<Step> want = ParsePath(path);
  if (want.empty()) return 0;
  std::vector<Frame> stack;
  // Does the stack with `key` as the innermost key spell `want`?
  auto matches = [&](const std::string& key) {
    std::vector<Step> have;
    for (const Frame& f : stack) {
      if (f.array) {
        have.push_back({"", f.index});
      } else if (&f != &stack.back()) {
        have.push_back({f.key, -1});
      }
    }
    have.push_back({key, -1});
    if (have.size() != want.size()) return false;
    for (size_t i = 0; i < have.size(); ++i) {
      if (have[i].key != want[i].key || have[i].index != want[i].index) return false;
    }
    return true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i;
      std::string s;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        s += text[i];
      }
      if (!stack.empty() && !stack.back().array && stack.back().expect_key) {
        const std::string key = Fold(s);
        if (matches(key)) return LineOfOffset(text, start);
        stack.back().key = key;
        stack.back().expect_key = false;
      }
    } else if (c == '{' || c == '[') {
      stack.push_back({c == '[', 0, "", c == '{'});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',' && !stack.empty()) {
      if (stack.back().array) {
        ++stack.back().index;
      } else {
        stack.back().expect_key = true;
      }
    }
  }
  return 0;
}

}  // namespace kiln::config
