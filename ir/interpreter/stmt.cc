// Compiles statements into closures, and the Interpret entry point.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "ir/functor.h"
#include "ir/interpreter/compiler.h"
#include "ir/interpreter/thread_block.h"
#include "ir/ndarray.h"
#include "ir/op.h"

namespace kiln::ir::interp {

namespace {

using WriteFn = void (*)(std::byte*, Slot);

template <typename T>
void StoreInt(std::byte* p, Slot s) {
  auto v = static_cast<T>(s.i);
  std::memcpy(p, &v, sizeof(T));
}
void StoreBool(std::byte* p, Slot s) { *p = static_cast<std::byte>(s.i != 0); }
void StoreF16(std::byte* p, Slot s) {
  uint16_t v = DoubleToFloat16Bits(s.f);
  std::memcpy(p, &v, 2);
}
void StoreBF16(std::byte* p, Slot s) {
  uint16_t v = DoubleToBFloat16Bits(s.f);
  std::memcpy(p, &v, 2);
}
void StoreF32(std::byte* p, Slot s) {
  auto v = static_cast<float>(s.f);
  std::memcpy(p, &v, 4);
}
void StoreF64(std::byte* p, Slot s) { std::memcpy(p, &s.f, 8); }

WriteFn StorerFor(DataType t) {
  if (t.is_bool()) return StoreBool;
  if (t.is_bfloat()) return StoreBF16;
  if (t.is_float()) return t.bits() == 16 ? StoreF16 : t.bits() == 32 ? StoreF32 : StoreF64;
  switch (t.bytes()) {
    case 1:
      return StoreInt<uint8_t>;
    case 2:
      return StoreInt<uint16_t>;
    case 4:
      return StoreInt<uint32_t>;
    default:
      return StoreInt<int64_t>;
  }
}

int64_t EvalScalar(const ExprFn& fn, Frame& fr) {
  Slot s;
  fn(fr, &s);
  return s.i;
}

// Row-major strides of a shape, in elements.
std::vector<int64_t> CompactStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

// Elements of storage a layout spans (the largest offset + 1).
int64_t SpanOf(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    last += (shape[d] - 1) * strides[d];
  }
  return last + 1;
}

// Resolves a layout at run time; shape and strides are evaluated in fr.
void ResolveLayout(const BufferLayout& layout, Frame& fr, std::vector<int64_t>* shape,
                   std::vector<int64_t>* strides) {
  shape->clear();
  for (const auto& e : layout.shape) shape->push_back(EvalScalar(e.fn, fr));
  if (layout.strides.empty()) {
    *strides = CompactStrides(*shape);
  } else {
    strides->clear();
    for (const auto& e : layout.strides) strides->push_back(EvalScalar(e.fn, fr));
  }
}

struct AllocSpec {
  int slot;
  DataType dtype;
  BufferLayout layout;
  bool shared;  // one per GPU thread block (thread_block.h)
};

struct IterSpec {
  IntOperand value;
  int slot;
  bool reduce;
  bool const_dom;
  int64_t min = 0, extent = 0;  // when const_dom
  ExprFn min_fn, extent_fn;     // otherwise
  const std::string* name;
};

// True if s has a barrier or a warp shuffle: its threads communicate.
bool HasCrossThreadCall(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void VisitCall(const CallNode* op) override {
      found = found || op->op == CallOp::kStorageSync || op->op == CallOp::kWarpShuffleDown;
      IRVisitor::VisitCall(op);
    }
  } f;
  f.VisitStmt(s);
  return f.found;
}

bool IsShuffle(const Expr& e) {
  const auto* c = e.as<CallNode>();
  return c != nullptr && c->op == CallOp::kWarpShuffleDown;
}

// 0 for threadIdx.x, 1 for .y, 2 for .z; -1 for any other tag.
int ThreadAxis(const std::string& tag) {
  if (tag.size() != 11 || tag.rfind("threadIdx.", 0) != 0) return -1;
  const char c = tag[10];
  return c >= 'x' && c <= 'z' ? c - 'x' : -1;
}

}  // namespace

void FillGarbage(NDArray* a) {
  DataType t = a->dtype();
  const int64_t n = a->size();
  if (t.is_bfloat()) {
    std::fill_n(a->data_as<uint16_t>(), n, uint16_t{0x7FC0});
  } else if (!t.is_float()) {
    std::memset(a->data(), 0xA5, a->nbytes());
  } else if (t.bits() == 16) {
    std::fill_n(a->data_as<uint16_t>(), n, uint16_t{0x7E00});
  } else if (t.bits() == 32) {
    std::fill_n(a->data_as<float>(), n, std::numeric_limits<float>::quiet_NaN());
  } else {
    std::fill_n(a->data_as<double>(), n, std::numeric_limits<double>::quiet_NaN());
  }
}

int Compiler::BindVar(const Var& v) {
  int slot = num_var_slots_++;
  var_slots_[v.get()].push_back(slot);
  return slot;
}

void Compiler::UnbindVar(const Var& v) {
  auto it = var_slots_.find(v.get());
  it->second.pop_back();
  if (it->second.empty()) var_slots_.erase(it);
}

int Compiler::VarSlot(const VarNode* v) const {
  auto it = var_slots_.find(v);
  if (it == var_slots_.end()) Error("variable '" + v->name + "' is not defined here");
  return it->second.back();
}

int Compiler::BindBuffer(const Buffer& b) {
  int slot = num_buffer_slots_++;
  buffer_slots_[b.get()].push_back(slot);
  return slot;
}

void Compiler::UnbindBuffer(const Buffer& b) {
  auto it = buffer_slots_.find(b.get());
  it->second.pop_back();
  if (it->second.empty()) buffer_slots_.erase(it);
}

int Compiler::BufferSlot(const Buffer& b) const {
  auto it = buffer_slots_.find(b.get());
  if (it == buffer_slots_.end()) {
    Error("buffer '" + b.name() + "' is neither a parameter nor allocated by an enclosing block");
  }
  return it->second.back();
}

BufferLayout Compiler::CompileLayout(const Buffer& b) {
  BufferLayout layout;
  layout.node = b.get();
  auto scalar_int = [&](const Expr& e, const char* what) {
    CompiledExpr c = CompileExpr(e);
    if (!c.dtype.is_integer() || !c.dtype.is_scalar()) {
      Error("buffer '" + b.name() + "' has a " + c.dtype.str() + " " + what);
    }
    return c;
  };
  for (const auto& e : b.shape()) layout.shape.push_back(scalar_int(e, "extent"));
  if (!b->strides.empty()) {
    if (b->strides.size() != b.ndim()) {
      Error("buffer '" + b.name() + "' has " + std::to_string(b->strides.size()) + " strides for " +
            std::to_string(b.ndim()) + " dimensions");
    }
    for (const auto& e : b->strides) layout.strides.push_back(scalar_int(e, "stride"));
  }
  return layout;
}

StmtFn Compiler::CompileStmt(const Stmt& s) {
  if (!s.defined()) Error("undefined statement");
  switch (s.kind()) {
    case StmtKind::kFor:
      return CompileFor(s);
    case StmtKind::kBlockRealize:
      return CompileBlockRealize(s.as<BlockRealizeNode>());
    case StmtKind::kBufferStore:
      return CompileStore(s.as<BufferStoreNode>());
    case StmtKind::kSeqStmt: {
      std::vector<StmtFn> seq;
      for (const auto& child : s.as<SeqStmtNode>()->seq) seq.push_back(CompileStmt(child));
      return [seq = std::move(seq)](Frame& fr) {
        for (const auto& fn : seq) fn(fr);
      };
    }
    case StmtKind::kIfThenElse: {
      const auto* op = s.as<IfThenElseNode>();
      IntOperand cond = CompileIntOperand(op->condition, "an if condition");
      StmtFn then_case = CompileStmt(op->then_case);
      StmtFn else_case = op->else_case.defined() ? CompileStmt(op->else_case) : StmtFn();
      return [cond = std::move(cond), then_case = std::move(then_case),
              else_case = std::move(else_case)](Frame& fr) {
        if (cond.Eval(fr)) {
          then_case(fr);
        } else if (else_case) {
          else_case(fr);
        }
      };
    }
    case StmtKind::kEvaluate: {
      const auto* call = s.as<EvaluateNode>()->value.as<CallNode>();
      if (call != nullptr && call->op == CallOp::kStorageSync && in_gpu_block_) {
        // The site: this statement's own cell (copies of one node made by
        // unrolling are different barriers).
        return [site = std::make_shared<char>()](Frame& fr) {
          fr.gpu->block->Barrier(*fr.gpu, site.get());
        };
      }
      CompiledExpr e = CompileExpr(s.as<EvaluateNode>()->value);
      return [fn = std::move(e.fn), scratch = std::vector<Slot>(e.lanes())](Frame& fr) mutable {
        fn(fr, scratch.data());
      };
    }
  }
  Error("unknown statement kind");
}

StmtFn Compiler::CompileFor(const Stmt& s) {
  const auto* op = s.as<ForNode>();
  if (op->for_kind == ForKind::kThreadBinding) {
    if (in_gpu_block_ && ThreadAxis(op->thread_tag) >= 0) return CompileThreadIndex(op);
    if (in_gpu_block_ && op->thread_tag.rfind("blockIdx", 0) == 0) {
      Error("loop '" + op->loop_var.name() + "' bound to " + op->thread_tag +
            " inside the thread loops of a GPU kernel");
    }
    // The innermost blockIdx loop of a kernel whose threads communicate (or
    // its outermost threadIdx loop, in a kernel of one block).
    const auto* inner = op->body.as<ForNode>();
    const bool block_loop = op->thread_tag.rfind("blockIdx", 0) == 0 &&
                            !(inner != nullptr && inner->for_kind == ForKind::kThreadBinding &&
                              inner->thread_tag.rfind("blockIdx", 0) == 0);
    if (!in_gpu_block_ && (block_loop || ThreadAxis(op->thread_tag) >= 0) &&
        HasCrossThreadCall(op->body)) {
      return CompileGpuBlocks(s);
    }
  }
  const std::string what = "the range of loop '" + op->loop_var.name() + "'";
  IntOperand min = CompileIntOperand(op->min, what), extent = CompileIntOperand(op->extent, what);
  const int slot = BindVar(op->loop_var);
  StmtFn body = CompileStmt(op->body);
  UnbindVar(op->loop_var);
  return
      [min = std::move(min), extent = std::move(extent), slot, body = std::move(body)](Frame& fr) {
        const int64_t begin = min.Eval(fr);
        const int64_t end = begin + extent.Eval(fr);
        for (int64_t i = begin; i < end; ++i) {
          fr.vars[slot] = i;
          body(fr);
        }
      };
}

StmtFn Compiler::CompileGpuBlocks(const Stmt& s) {
  const auto* op = s.as<ForNode>();
  const bool block_loop = ThreadAxis(op->thread_tag) < 0;
  const Stmt region = block_loop ? op->body : s;
  // The block's shape: each threadIdx axis has one constant extent per kernel.
  struct Dims : IRVisitor {
    std::array<int64_t, 3> dims{1, 1, 1};
    std::array<bool, 3> seen{false, false, false};
    std::string error;
    void VisitFor(const ForNode* f) override {
      const int axis = ThreadAxis(f->thread_tag);
      if (f->for_kind == ForKind::kThreadBinding && axis >= 0) {
        int64_t n = 0;
        if (!AsConstInt(f->extent, &n) || !IsConstInt(f->min, 0) || n < 1) {
          error = "loop '" + f->loop_var.name() + "' bound to " + f->thread_tag +
                  " needs a constant positive extent starting at 0";
        } else if (seen[axis] && dims[axis] != n) {
          error = f->thread_tag + " has extents " + std::to_string(dims[axis]) + " and " +
                  std::to_string(n) + " in one kernel";
        } else {
          dims[axis] = n;
          seen[axis] = true;
        }
      }
      IRVisitor::VisitFor(f);
    }
  } d;
  d.VisitStmt(region);
  if (!d.error.empty()) Error(d.error);
  const std::array<int64_t, 3> dims = d.dims;

  int slot = -1;
  IntOperand min, extent;
  if (block_loop) {
    const std::string what = "the range of loop '" + op->loop_var.name() + "'";
    min = CompileIntOperand(op->min, what);
    extent = CompileIntOperand(op->extent, what);
    slot = BindVar(op->loop_var);
  }
  in_gpu_block_ = true;
  StmtFn body = CompileStmt(region);
  in_gpu_block_ = false;
  if (block_loop) UnbindVar(op->loop_var);
  auto run_block = [body = std::move(body), dims](Frame& fr) {
    ThreadBlock block(dims);
    block.Run([&](GpuThread& t) {
      Frame own = fr;  // registers and local memory are the thread's own
      own.gpu = &t;
      body(own);
    });
  };
  if (!block_loop) return run_block;
  return [min = std::move(min), extent = std::move(extent), slot,
          run_block = std::move(run_block)](Frame& fr) {
    const int64_t begin = min.Eval(fr);
    const int64_t end = begin + extent.Eval(fr);
    for (int64_t i = begin; i < end; ++i) {
      fr.vars[slot] = i;
      run_block(fr);
    }
  };
}

StmtFn Compiler::CompileThreadIndex(const ForNode* op) {
  const int axis = ThreadAxis(op->thread_tag);
  const int slot = BindVar(op->loop_var);
  StmtFn body = CompileStmt(op->body);
  UnbindVar(op->loop_var);
  // CompileGpuBlocks checked the extent: it is the block's along this axis.
  return [axis, slot, body = std::move(body)](Frame& fr) {
    fr.vars[slot] = fr.gpu->index[axis];
    body(fr);
  };
}

StmtFn Compiler::CompileBlockRealize(const BlockRealizeNode* op) {
  const BlockNode* blk = op->block.get();
  if (blk == nullptr) Error("block realize without a block");
  const std::string* outer = block_;
  block_ = &blk->name;
  if (op->iter_values.size() != blk->iter_vars.size()) {
    Error(std::to_string(blk->iter_vars.size()) + " iteration variables but " +
          std::to_string(op->iter_values.size()) + " bindings");
  }

  // Bindings, predicate and domains are evaluated outside the block's scope.
  int64_t pred_const = 0;
  const bool always = AsConstInt(op->predicate, &pred_const) && pred_const != 0;
  ExprFn pred;
  if (!always) {
    CompiledExpr p = CompileExpr(op->predicate);
    if (!p.dtype.is_scalar()) Error("block predicate of type " + p.dtype.str());
    pred = p.fn;
  }
  std::vector<IterSpec> iters;
  for (size_t k = 0; k < blk->iter_vars.size(); ++k) {
    const IterVar& iv = blk->iter_vars[k];
    IterSpec spec;
    spec.value = CompileIntOperand(op->iter_values[k],
                                   "the binding of iteration variable '" + iv.var.name() + "'");
    spec.reduce = iv.iter_type == IterType::kCommReduce;
    spec.const_dom = AsConstInt(iv.dom.min, &spec.min) && AsConstInt(iv.dom.extent, &spec.extent);
    if (!spec.const_dom) {
      spec.min_fn = CompileExpr(iv.dom.min).fn;
      spec.extent_fn = CompileExpr(iv.dom.extent).fn;
    }
    spec.name = &iv.var.get()->name;
    iters.push_back(std::move(spec));
  }
  for (size_t k = 0; k < iters.size(); ++k) iters[k].slot = BindVar(blk->iter_vars[k].var);

  std::vector<AllocSpec> allocs;
  for (const Buffer& b : blk->alloc_buffers) {
    BufferLayout layout = CompileLayout(b);
    const bool shared = in_gpu_block_ && (b.scope() == "shared" || b.scope() == "shared.dyn");
    allocs.push_back({BindBuffer(b), b.dtype(), std::move(layout), shared});
  }
  StmtFn init = blk->init ? CompileStmt(*blk->init) : StmtFn();
  StmtFn body = CompileStmt(blk->body);
  for (const Buffer& b : blk->alloc_buffers) UnbindBuffer(b);
  for (const IterVar& iv : blk->iter_vars) UnbindVar(iv.var);
  const std::string* block = block_;
  block_ = outer;

  return [pred = std::move(pred), iters = std::move(iters), allocs = std::move(allocs),
          init = std::move(init), body = std::move(body), block](Frame& fr) {
    if (pred && EvalScalar(pred, fr) == 0) return;
    bool at_first_reduction_step = true;
    for (const IterSpec& it : iters) {
      const int64_t v = it.value.Eval(fr);
      int64_t min = it.min, extent = it.extent;
      if (!it.const_dom) {
        min = EvalScalar(it.min_fn, fr);
        extent = EvalScalar(it.extent_fn, fr);
      }
      if (v < min || v >= min + extent) {
        Fail(block, "iteration variable '" + *it.name + "' = " + std::to_string(v) +
                        " is outside its domain [" + std::to_string(min) + ", " +
                        std::to_string(min + extent) + ")");
      }
      if (it.reduce && v != min) at_first_reduction_step = false;
      fr.vars[it.slot] = v;
    }
    // The storage lives until this closure returns (or throws).
    std::vector<NDArray> storage;
    for (const AllocSpec& a : allocs) {
      BufferView& view = fr.buffers[a.slot];
      ResolveLayout(a.layout, fr, &view.shape, &view.strides);
      for (int64_t extent : view.shape) {
        if (extent < 0) {
          Fail(block, "allocates buffer '" + a.layout.node->name + "' with negative shape " +
                          ShapeToString(view.shape));
        }
      }
      const int64_t span = SpanOf(view.shape, view.strides);
      if (a.shared) {
        view.data = fr.gpu->block->Shared(a.layout.node, a.dtype, span);
        continue;
      }
      storage.emplace_back(a.dtype, std::vector<int64_t>{span});
      FillGarbage(&storage.back());
      view.data = static_cast<std::byte*>(storage.back().data());
    }
    if (init && at_first_reduction_step) init(fr);
    body(fr);
  };
}

StmtFn Compiler::CompileStore(const BufferStoreNode* op) {
  const Buffer& buf = op->buffer;
  const int slot = BufferSlot(buf);
  if (op->indices.size() != buf.ndim())
    Error("store to " + buf.name() + " with the wrong number of indices");
  // A warp shuffle suspends the thread (thread_block.h) and so is compiled
  // only as a store's whole value, where no scratch of an enclosing
  // expression is live across the suspension.
  shuffle_allowed_ = IsShuffle(op->value);
  CompiledExpr value = CompileExpr(op->value);
  shuffle_allowed_ = false;
  if (value.dtype.is_handle()) Error("store of a handle to " + buf.name());
  const int value_lanes = value.lanes();
  ExprFn fn = MakeConvert(std::move(value.fn), value.dtype, buf.dtype().with_lanes(value_lanes));
  const WriteFn write = StorerFor(buf.dtype());
  const int64_t elem = buf.dtype().bytes();
  const std::string* block = block_;
  const std::string* name = &buf.get()->name;
  const size_t ndim = op->indices.size();
  int lanes = 1;
  for (const auto& i : op->indices) lanes = std::max(lanes, i.dtype().lanes());

  if (lanes == 1) {
    if (value_lanes != 1) {
      Error("store of a " + value.dtype.str() + " value to a single element of " + buf.name());
    }
    std::vector<IntOperand> index;
    for (const auto& i : op->indices)
      index.push_back(CompileIntOperand(i, "an index of " + buf.name()));
    return
        [fn = std::move(fn), index = std::move(index), write, elem, slot, block, name](Frame& fr) {
          Slot v;
          fn(fr, &v);
          BufferView& b = fr.buffers[slot];
          int64_t offset = 0;
          for (size_t d = 0; d < index.size(); ++d) {
            const int64_t i = index[d].Eval(fr);
            if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.shape[d])) {
              std::vector<int64_t> all;
              for (const IntOperand& k : index) all.push_back(k.Eval(fr));
              Fail(block, "store " + AccessString(*name, all) + " is out of bounds of shape " +
                              ShapeToString(b.shape));
            }
            offset += i * b.strides[d];
          }
          write(b.data + offset * elem, v);
        };
  }
  if (value_lanes != 1 && value_lanes != lanes) {
    Error("store of a " + value.dtype.str() + " value to " + buf.name() + " at " +
          std::to_string(lanes) + " lanes");
  }
  std::vector<ExprFn> index;
  std::vector<int> index_lanes;
  for (const auto& i : op->indices) {
    CompiledExpr c = CompileExpr(i);
    if (!c.dtype.is_integer()) Error("store " + buf.name() + " with a " + c.dtype.str() + " index");
    if (c.lanes() != 1 && c.lanes() != lanes) {
      Error("store to " + buf.name() + " with indices of different lane counts");
    }
    index.push_back(std::move(c.fn));
    index_lanes.push_back(c.lanes());
  }
  // A vector store writes `lanes` elements; a scalar value is broadcast.
  return
      [fn = std::move(fn), index = std::move(index), index_lanes = std::move(index_lanes), write,
       elem, slot, block, name, ndim, lanes, value_lanes, values = std::vector<Slot>(value_lanes),
       scratch = std::vector<Slot>(ndim * lanes)](Frame& fr) mutable {
        fn(fr, values.data());
        BufferView& b = fr.buffers[slot];
        for (size_t d = 0; d < ndim; ++d) index[d](fr, &scratch[d * lanes]);
        for (int l = 0; l < lanes; ++l) {
          int64_t offset = 0;
          for (size_t d = 0; d < ndim; ++d) {
            const int64_t i = scratch[d * lanes + (index_lanes[d] == 1 ? 0 : l)].i;
            if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.shape[d])) {
              std::vector<int64_t> all(ndim);
              for (size_t k = 0; k < ndim; ++k) {
                all[k] = scratch[k * lanes + (index_lanes[k] == 1 ? 0 : l)].i;
              }
              Fail(block, "store " + AccessString(*name, all) + " (lane " + std::to_string(l) +
                              ") is out of bounds of shape " + ShapeToString(b.shape));
            }
            offset += i * b.strides[d];
          }
          write(b.data + offset * elem, values[value_lanes == 1 ? 0 : l]);
        }
      };
}

}  // namespace kiln::ir::interp

namespace kiln::ir {

void Interpret(const PrimFunc& f, std::vector<NDArray*> args) {
  using interp::BufferLayout;
  using interp::Frame;
  const std::string where = "function '" + f.name + "': ";
  if (args.size() != f.params.size()) {
    throw InterpreterError(where + "takes " + std::to_string(f.params.size()) +
                           " argument(s), got " + std::to_string(args.size()));
  }
  interp::Compiler compiler(f);
  // Parameter extents that are bare variables are bound from the arguments.
  struct ShapeBinder {
    int var_slot;
    size_t param, dim;
  };
  std::vector<ShapeBinder> binders;
  std::vector<BufferLayout> layouts;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.params[i];
    for (size_t d = 0; d < b.ndim(); ++d) {
      const auto* v = b.shape()[d].as<VarNode>();
      if (v != nullptr && !compiler.IsBound(v)) {
        binders.push_back(
            {compiler.BindVar(Var(std::static_pointer_cast<const VarNode>(b.shape()[d].node()))), i,
             d});
      }
    }
  }
  for (const Buffer& b : f.params) {
    layouts.push_back(compiler.CompileLayout(b));
    compiler.BindBuffer(b);
  }

  Frame fr;
  fr.buffers.resize(f.params.size());
  // Shape variables occupy the first slots; size the frame for them now so
  // the parameter layouts can be evaluated before the body is compiled.
  fr.vars.resize(compiler.num_var_slots());
  auto describe = [&](size_t i) {
    return where + "argument " + std::to_string(i) + " (" + f.params[i].name() + ")";
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const NDArray* a = args[i];
    const Buffer& b = f.params[i];
    if (a == nullptr || !a->defined()) throw InterpreterError(describe(i) + " is empty");
    if (a->dtype() != b.dtype()) {
      throw InterpreterError(describe(i) + " has dtype " + a->dtype().str() +
                             "; the parameter is " + b.dtype().str());
    }
    if (a->ndim() != b.ndim()) {
      throw InterpreterError(describe(i) + " has " + std::to_string(a->ndim()) +
                             " dimension(s); the parameter has " + std::to_string(b.ndim()));
    }
  }
  for (const ShapeBinder& sb : binders) fr.vars[sb.var_slot] = args[sb.param]->shape()[sb.dim];
  for (size_t i = 0; i < args.size(); ++i) {
    interp::BufferView& view = fr.buffers[i];
    interp::ResolveLayout(layouts[i], fr, &view.shape, &view.strides);
    if (view.shape != args[i]->shape()) {
      throw InterpreterError(describe(i) + " has shape " + args[i]->ShapeString() +
                             "; the parameter has shape " + ShapeToString(view.shape));
    }
    if (interp::SpanOf(view.shape, view.strides) > args[i]->size()) {
      throw InterpreterError(describe(i) + ": the parameter's strides reach past the " +
                             std::to_string(args[i]->size()) + " elements of the argument");
    }
    view.data = static_cast<std::byte*>(args[i]->data());
  }

  interp::StmtFn body = compiler.CompileStmt(f.body);
  fr.vars.resize(compiler.num_var_slots());
  fr.buffers.resize(compiler.num_buffer_slots());
  body(fr);
}

void Interpret(const PrimFunc& f, std::vector<NDArray>& args) {
  std::vector<NDArray*> ptrs;
  ptrs.reserve(args.size());
  for (auto& a : args) ptrs.push_back(&a);
  Interpret(f, std::move(ptrs));
}

}  // namespace kiln::ir
