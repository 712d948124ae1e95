#include "search/failure_stats.h"

namespace kiln::search {

int64_t FailureStats::Total() const {
  int64_t n = 0;
  for (const auto& [_, c] : counts) n += c;
  return n;
}

std::string FailureStats::Summary() const {
  std::string s;
  for (const auto& [name, c] : counts) {
    s += (s.empty() ? "" : ", ") + name + ": " + std::to_string(c);
  }
  return s.empty() ? "none" : s;
}

void FailureStats::Add(const std::string& kind, const std::string& message, int64_t n) {
  counts[kind] += n;
  if (!message.empty()) example.emplace(kind, message);
}

void FailureStats::Merge(const FailureStats& other) {
  for (const auto& [kind, c] : other.counts) {
    auto it = other.example.find(kind);
    Add(kind, it == other.example.end() ? "" : it->second, c);
  }
}

}  // namespace kiln::search
