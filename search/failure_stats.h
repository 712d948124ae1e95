// Why a strategy's attempts at producing a candidate failed, by cause.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace kiln::search {

// Counts by kind: "replay" (a trace did not replay), "nothing to mutate:
// <mutator>" (a mutator found nothing to change), or the name of the
// postprocessor that rejected the candidate. `example` keeps the first message per kind, for the log.
struct FailureStats {
  std::map<std::string, int64_t> counts;
  std::map<std::string, std::string> example;
  int64_t Total() const;
  std::string Summary() const;  // "RewriteParallelVectorizeUnroll: 3, replay: 1" (sorted)
  void Add(const std::string& kind, const std::string& message, int64_t n = 1);
  void Merge(const FailureStats& other);
};

}  // namespace kiln::search
