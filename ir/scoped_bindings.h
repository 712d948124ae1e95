// Bindings in nested scopes, as a stack: each binding ties one node on each
// of `Sides` sides and carries a Payload. ir/structural_hash.cc keeps one
// side (a definition's number), ir/structural_equal.cc two (the a-side and
// b-side nodes of its bijection); sharing the stack keeps their scoping the
// same, which "equal implies equal hash" rests on.
//
// A scope's bindings are popped when it closes, uncovering whatever they
// shadowed. Scopes are shallow in practice, so lookups scan from the top; a
// deep stack (many buffers in one block, say) gets an index per side, kept
// for as long as the stack stays deep.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::ir {

template <typename Node, size_t Sides, typename Payload>
class ScopedBindings {
 public:
  static constexpr size_t kNotBound = SIZE_MAX;
  using Nodes = std::array<const Node*, Sides>;

  // Stack position of the innermost binding of `n` on `side`, or kNotBound.
  size_t Innermost(size_t side, const Node* n) const {
    if (!indexed_) {
      for (size_t k = stack_.size(); k-- > 0;) {
        if (stack_[k].nodes[side] == n) return k;
      }
      return kNotBound;
    }
    auto it = index_[side].find(n);
    return it == index_[side].end() ? kNotBound : it->second;
  }
  const Payload& payload(size_t k) const { return stack_[k].payload; }

  void Bind(const Nodes& nodes, Payload payload) {
    stack_.push_back({nodes, std::move(payload), {}});
    if (indexed_) {
      IndexAt(stack_.size() - 1);
    } else if (stack_.size() > kScanLimit) {
      indexed_ = true;
      for (size_t k = 0; k < stack_.size(); ++k) IndexAt(k);
    }
  }
  size_t Mark() const { return stack_.size(); }
  void PopTo(size_t mark) {
    while (stack_.size() > mark) {
      if (indexed_) {
        const Entry& top = stack_.back();
        for (size_t s = 0; s < Sides; ++s) Restore(&index_[s], top.nodes[s], top.shadowed[s]);
      }
      stack_.pop_back();
    }
    if (indexed_ && stack_.size() <= kScanLimit / 2) {
      indexed_ = false;
      for (auto& index : index_) index.clear();
    }
  }

 private:
  static constexpr size_t kScanLimit = 32;
  struct Entry {
    Nodes nodes;
    Payload payload;
    // Positions of the bindings this one hides, per side (indexed only).
    std::array<size_t, Sides> shadowed;
  };
  using Index = std::unordered_map<const Node*, size_t>;  // node -> innermost position

  static void Restore(Index* index, const Node* n, size_t shadowed) {
    if (shadowed == kNotBound) {
      index->erase(n);
    } else {
      (*index)[n] = shadowed;
    }
  }
  void IndexAt(size_t k) {
    for (size_t s = 0; s < Sides; ++s) {
      auto [it, inserted] = index_[s].try_emplace(stack_[k].nodes[s], k);
      stack_[k].shadowed[s] = inserted ? kNotBound : it->second;
      it->second = k;
    }
  }

  std::vector<Entry> stack_;
  bool indexed_ = false;
  std::array<Index, Sides> index_;
};

}  // namespace kiln::ir
