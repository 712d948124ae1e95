// ValueNumbering: the emitter's memory of pure values it has already
// computed, so that an expression met again where the first result still
// dominates is reused instead of emitted again (internal to codegen/).
//
// Why: lowered kernels state every buffer index in full at every access, and
// explicit unrolling multiplies the accesses. One unrolled conv2d candidate
// came out as 55,782 LLVM instructions, 2,703 with this reuse: the rest was
// the same index arithmetic (`n // 4 * 256`, its floor-division fix-ups,
// the row offsets) recomputed per access. LLVM's EarlyCSE removes such
// copies early and cheaply, so the objects are byte-identical either way and
// the saving is what the first passes no longer walk: under callgrind that
// candidate's build went from 4.2 to 3.9 billion instructions; 16 GMM:0
// candidates, together with the LoopLoadElimination skip (llvm_backend.cc),
// from 9.17 to 8.96 billion.
//
// Only values that depend on nothing but their operands go in (integer and
// boolean arithmetic, casts, splats, address arithmetic; never a load). A
// value is reused only where it dominates: each region of control flow the
// emitter opens (a loop body, a branch of an if) forgets on exit what was
// computed inside it, and every LLVM function has its own table.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include <llvm/ADT/DenseMap.h>

namespace llvm {
class Value;
}  // namespace llvm

namespace kiln::codegen {

class ValueNumbering {
 public:
  // What identifies a value: the emitter's code for the operation, a
  // modifier (operator, flags, lane count), and up to two operands (LLVM
  // values or types; constants are unique in LLVM, so equal constants are
  // the same pointer).
  using Key = std::tuple<unsigned, uint64_t, const void*, const void*>;

  // The value for `key`, computed by make() unless a dominating one exists.
  template <typename Make>
  llvm::Value* GetOrMake(const Key& key, Make make) {
    if (auto it = table_.find(key); it != table_.end()) return it->second;
    llvm::Value* v = make();
    table_.try_emplace(key, v);
    added_.push_back(key);
    return v;
  }

  // A region of control flow: what is computed between Open() and
  // Close(mark) is forgotten at Close.
  size_t Open() const { return added_.size(); }
  void Close(size_t mark) {
    while (added_.size() > mark) {
      table_.erase(added_.back());
      added_.pop_back();
    }
  }

 private:
  llvm::DenseMap<Key, llvm::Value*> table_;
  std::vector<Key> added_;  // in insertion order, for Close
};

}  // namespace kiln::codegen
