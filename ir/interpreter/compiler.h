// Internal to the interpreter: a PrimFunc is compiled once into a tree of
// closures. Variables live in numbered integer slots of a Frame and buffers in
// numbered views, so running never looks anything up by name or node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/interpreter.h"
#include "ir/stmt.h"

namespace kiln::ir::interp {

// One lane of a value: integers and bools (0/1) as int64 (uint64 as its bit
// pattern), floats as double already rounded to their type.
union Slot {
  int64_t i;
  double f;
};

inline Slot IntSlot(int64_t v) {
  Slot s;
  s.i = v;
  return s;
}
inline Slot FloatSlot(double v) {
  Slot s;
  s.f = v;
  return s;
}

// A buffer bound at run time: storage plus extents and strides in elements.
struct BufferView {
  std::byte* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

struct GpuThread;

struct Frame {
  std::vector<int64_t> vars;
  std::vector<BufferView> buffers;
  // Set inside a GPU thread block run by ir/interpreter/thread_block.h.
  GpuThread* gpu = nullptr;
};

// Writes dtype.lanes() lanes to out.
using ExprFn = std::function<void(Frame&, Slot* out)>;
using StmtFn = std::function<void(Frame&)>;

struct CompiledExpr {
  ExprFn fn;
  DataType dtype;
  int lanes() const { return dtype.lanes(); }
};

// A scalar integer (or bool) operand. Variables and constants, by far the
// most common loop bounds, bindings and indices, are read without a closure
// call.
struct IntOperand {
  int var_slot = -1;
  int64_t constant = 0;
  ExprFn fn;  // set unless a variable or a constant
  int64_t Eval(Frame& fr) const {
    if (var_slot >= 0) return fr.vars[var_slot];
    if (!fn) return constant;
    Slot s;
    fn(fr, &s);
    return s.i;
  }
};

// How a buffer's storage is laid out, resolved when it is bound (parameter)
// or allocated (alloc_buffer).
struct BufferLayout {
  const BufferNode* node = nullptr;
  std::vector<CompiledExpr> shape;
  std::vector<CompiledExpr> strides;  // empty: compact row-major
};

[[noreturn]] void Fail(const std::string* block, const std::string& msg);

// Fills fresh storage so that reading it before writing is visible: NaN for
// floats, a 0xA5 byte pattern for integers.
void FillGarbage(NDArray* a);

class Compiler {
 public:
  explicit Compiler(const PrimFunc& f) : func_(f) {}

  CompiledExpr CompileExpr(const Expr& e);
  StmtFn CompileStmt(const Stmt& s);
  // e must be a scalar integer or bool; `what` names it in the error.
  IntOperand CompileIntOperand(const Expr& e, const std::string& what);

  // Scoped variable slots; Bind returns the new slot, Unbind restores the
  // binding the variable had before (shadowing).
  int BindVar(const Var& v);
  void UnbindVar(const Var& v);
  bool IsBound(const VarNode* v) const { return var_slots_.count(v) > 0; }
  int VarSlot(const VarNode* v) const;
  int BindBuffer(const Buffer& b);
  void UnbindBuffer(const Buffer& b);
  int BufferSlot(const Buffer& b) const;
  BufferLayout CompileLayout(const Buffer& b);

  int num_var_slots() const { return num_var_slots_; }
  int num_buffer_slots() const { return num_buffer_slots_; }
  void set_block(const std::string* name) { block_ = name; }
  const std::string* block() const { return block_; }
  [[noreturn]] void Error(const std::string& msg) const { Fail(block_, msg); }

 private:
  CompiledExpr CompileBinary(const BinaryNode* op);
  CompiledExpr CompileCast(const CastNode* op);
  CompiledExpr CompileLoad(const BufferLoadNode* op);
  CompiledExpr CompileCall(const CallNode* op);
  CompiledExpr CompileIfThenElse(const CallNode* op);
  StmtFn CompileFor(const Stmt& s);
  // A kernel whose threads communicate, run as GPU thread blocks
  // (thread_block.h); inside one, a threadIdx loop binds the thread's index.
  StmtFn CompileGpuBlocks(const Stmt& s);
  StmtFn CompileThreadIndex(const ForNode* op);
  CompiledExpr CompileWarpShuffle(const CallNode* op);
  StmtFn CompileBlockRealize(const BlockRealizeNode* op);
  StmtFn CompileStore(const BufferStoreNode* op);

  const PrimFunc& func_;
  const std::string* block_ = nullptr;
  std::unordered_map<const VarNode*, std::vector<int>> var_slots_;
  std::unordered_map<const BufferNode*, std::vector<int>> buffer_slots_;
  int num_var_slots_ = 0;
  int num_buffer_slots_ = 0;
  bool in_gpu_block_ = false;
  bool shuffle_allowed_ = false;  // compiling the value of a scalar store
};

// Converts n lanes of type `from` to type `to` (C semantics, saturating).
ExprFn MakeConvert(ExprFn value, DataType from, DataType to);

// "A[3, 17]" from evaluated index lanes.
std::string AccessString(const std::string& buffer, const std::vector<int64_t>& indices);

}  // namespace kiln::ir::interp
