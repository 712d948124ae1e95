#include "ir/structural_equal.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/buffer.h"
#include "ir/error.h"
#include "ir/scoped_bindings.h"

namespace kiln::ir {

namespace {

const char* ExprKindName(ExprKind k) {
  switch (k) {
    case ExprKind::kIntImm: return "IntImm";
    case ExprKind::kFloatImm: return "FloatImm";
    case ExprKind::kStringImm: return "StringImm";
    case ExprKind::kVar: return "Var";
    case ExprKind::kAdd: return "Add";
    case ExprKind::kSub: return "Sub";
    case ExprKind::kMul: return "Mul";
    case ExprKind::kDiv: return "Div";
    case ExprKind::kMod: return "Mod";
    case ExprKind::kFloorDiv: return "FloorDiv";
    case ExprKind::kFloorMod: return "FloorMod";
    case ExprKind::kMin: return "Min";
    case ExprKind::kMax: return "Max";
    case ExprKind::kEQ: return "EQ";
    case ExprKind::kNE: return "NE";
    case ExprKind::kLT: return "LT";
    case ExprKind::kLE: return "LE";
    case ExprKind::kGT: return "GT";
    case ExprKind::kGE: return "GE";
    case ExprKind::kAnd: return "And";
    case ExprKind::kOr: return "Or";
    case ExprKind::kNot: return "Not";
    case ExprKind::kSelect: return "Select";
    case ExprKind::kCast: return "Cast";
    case ExprKind::kBufferLoad: return "BufferLoad";
    case ExprKind::kCall: return "Call";
    case ExprKind::kRamp: return "Ramp";
    case ExprKind::kBroadcast: return "Broadcast";
  }
  return "?";
}

const char* StmtKindName(StmtKind k) {
  switch (k) {
    case StmtKind::kFor: return "For";
    case StmtKind::kBlockRealize: return "BlockRealize";
    case StmtKind::kBufferStore: return "BufferStore";
    case StmtKind::kSeqStmt: return "SeqStmt";
    case StmtKind::kIfThenElse: return "IfThenElse";
    case StmtKind::kEvaluate: return "Evaluate";
  }
  return "?";
}

const char* IterTypeName(IterType t) {
  switch (t) {
    case IterType::kDataPar: return "S (spatial)";
    case IterType::kCommReduce: return "R (reduction)";
    case IterType::kOrdered: return "O (ordered)";
    case IterType::kOpaque: return "X (opaque)";
  }
  return "?";
}

// Floats compare by bit pattern, with every NaN the same value: the same rule
// as the hash stream, so that equal constants always hash equal.
uint64_t CanonicalFloatBits(double v) {
  if (v != v) return 0x7ff8000000000000ULL;
  return std::bit_cast<uint64_t>(v);
}

std::string Quote(std::string_view s) { return fmt::format("'{}'", s); }

// The definitions in scope, as (a-side node, b-side node) pairs
// (ir/scoped_bindings.h). A use of (a, b) is consistent exactly when the
// innermost pair that binds a and the innermost pair that binds b are the same
// pair, which is also what makes the hash stream (definition numbers) agree.
template <typename Node>
class ScopedBijection {
 public:
  enum class Lookup { kMatched, kMismatched, kBothFree };
  Lookup Check(const Node* a, const Node* b) const {
    const size_t ka = pairs_.Innermost(0, a), kb = pairs_.Innermost(1, b);
    if (ka == Pairs::kNotBound && kb == Pairs::kNotBound) return Lookup::kBothFree;
    return ka == kb ? Lookup::kMatched : Lookup::kMismatched;
  }
  bool IsBoundA(const Node* a) const { return pairs_.Innermost(0, a) != Pairs::kNotBound; }
  bool IsBoundB(const Node* b) const { return pairs_.Innermost(1, b) != Pairs::kNotBound; }
  void Bind(const Node* a, const Node* b) { pairs_.Bind({a, b}, {}); }
  size_t Mark() const { return pairs_.Mark(); }
  void PopTo(size_t mark) { pairs_.PopTo(mark); }

 private:
  struct NoPayload {};
  using Pairs = ScopedBindings<Node, 2, NoPayload>;
  Pairs pairs_;
};

// A bijection that only grows: free nodes matched at their first use.
template <typename Node>
class FirstUseBijection {
 public:
  // True if (a, b) is consistent with every earlier pair; *first is set when
  // neither had been seen (the pair is then recorded).
  bool Match(const Node* a, const Node* b, bool* first) {
    auto ia = ab_.find(a);
    auto ib = ba_.find(b);
    *first = ia == ab_.end() && ib == ba_.end();
    if (*first) {
      ab_.emplace(a, b);
      ba_.emplace(b, a);
      return true;
    }
    return ia != ab_.end() && ib != ba_.end() && ia->second == b && ib->second == a;
  }

 private:
  std::unordered_map<const Node*, const Node*> ab_, ba_;
};

// Compares two programs in the order of the hash stream (structural_hash.cc),
// binding definitions as it meets them. On the first difference it records a
// description and every caller on the way up adds its step to the path; on
// success no strings are built.
class Checker {
 public:
  // map_free: match free variables / buffers at first use (functions) rather
  // than by identity (fragments). explain: build the mismatch description.
  Checker(bool map_free, bool explain) : map_free_(map_free), explain_(explain) {}

  bool Func(const PrimFunc& a, const PrimFunc& b) {
    if (a.params.size() != b.params.size()) {
      return Fail([&] {
        return fmt::format("parameter count: {} vs {}", a.params.size(), b.params.size());
      });
    }
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (!DefBuffer(a.params[i], b.params[i], "parameter")) {
        return At([&] { return fmt::format("params[{}]", i); });
      }
    }
    if (!Annots(a.attrs, b.attrs)) return At("attrs");
    if (!S(a.body, b.body)) return At("body");
    return true;
  }

  bool E(const Expr& a, const Expr& b) {
    const ExprNode* x = a.get();
    const ExprNode* y = b.get();
    if (x == nullptr || y == nullptr) {
      if (x == y) return true;
      return Fail([&] {
        return fmt::format("expression: {} vs {}", x ? ExprKindName(x->kind) : "undefined",
                           y ? ExprKindName(y->kind) : "undefined");
      });
    }
    if (x->kind != y->kind) {
      return Fail([&] {
        return fmt::format("expression kind: {} vs {}", ExprKindName(x->kind),
                           ExprKindName(y->kind));
      });
    }
    if (x->dtype != y->dtype) {
      return Fail([&] {
        return fmt::format("{} dtype: {} vs {}", ExprKindName(x->kind), x->dtype.str(),
                           y->dtype.str());
      });
    }
    switch (x->kind) {
      case ExprKind::kIntImm: {
        int64_t va = static_cast<const IntImmNode*>(x)->value;
        int64_t vb = static_cast<const IntImmNode*>(y)->value;
        if (va == vb) return true;
        return Fail([&] { return fmt::format("IntImm value: {} vs {}", va, vb); });
      }
      case ExprKind::kFloatImm: {
        double va = static_cast<const FloatImmNode*>(x)->value;
        double vb = static_cast<const FloatImmNode*>(y)->value;
        if (CanonicalFloatBits(va) == CanonicalFloatBits(vb)) return true;
        return Fail([&] { return fmt::format("FloatImm value: {} vs {}", va, vb); });
      }
      case ExprKind::kStringImm: {
        const std::string& va = static_cast<const StringImmNode*>(x)->value;
        const std::string& vb = static_cast<const StringImmNode*>(y)->value;
        if (va == vb) return true;
        return Fail([&] { return fmt::format("StringImm value: {} vs {}", Quote(va), Quote(vb)); });
      }
      case ExprKind::kVar:
        return UseVar(static_cast<const VarNode*>(x), static_cast<const VarNode*>(y));
      case ExprKind::kNot:
        return E(static_cast<const NotNode*>(x)->a, static_cast<const NotNode*>(y)->a) ||
               At("Not.a");
      case ExprKind::kSelect: {
        const auto* p = static_cast<const SelectNode*>(x);
        const auto* q = static_cast<const SelectNode*>(y);
        if (!E(p->condition, q->condition)) return At("Select.condition");
        if (!E(p->true_value, q->true_value)) return At("Select.true_value");
        if (!E(p->false_value, q->false_value)) return At("Select.false_value");
        return true;
      }
      case ExprKind::kCast:
        return E(static_cast<const CastNode*>(x)->value, static_cast<const CastNode*>(y)->value) ||
               At("Cast.value");
      case ExprKind::kBufferLoad: {
        const auto* p = static_cast<const BufferLoadNode*>(x);
        const auto* q = static_cast<const BufferLoadNode*>(y);
        if (!UseBuffer(p->buffer, q->buffer)) return At("BufferLoad.buffer");
        return Exprs(p->indices, q->indices, "BufferLoad.indices");
      }
      case ExprKind::kCall: {
        const auto* p = static_cast<const CallNode*>(x);
        const auto* q = static_cast<const CallNode*>(y);
        if (p->op != q->op) {
          return Fail([&] {
            return fmt::format("Call op: {} vs {}", CallOpName(p->op), CallOpName(q->op));
          });
        }
        return Exprs(p->args, q->args, "Call.args");
      }
      case ExprKind::kRamp: {
        const auto* p = static_cast<const RampNode*>(x);
        const auto* q = static_cast<const RampNode*>(y);
        if (!E(p->base, q->base)) return At("Ramp.base");
        if (!E(p->stride, q->stride)) return At("Ramp.stride");
        if (p->lanes != q->lanes) {
          return Fail([&] { return fmt::format("Ramp lanes: {} vs {}", p->lanes, q->lanes); });
        }
        return true;
      }
      case ExprKind::kBroadcast: {
        const auto* p = static_cast<const BroadcastNode*>(x);
        const auto* q = static_cast<const BroadcastNode*>(y);
        if (!E(p->value, q->value)) return At("Broadcast.value");
        if (p->lanes != q->lanes) {
          return Fail([&] { return fmt::format("Broadcast lanes: {} vs {}", p->lanes, q->lanes); });
        }
        return true;
      }
      default: {
        const auto* p = static_cast<const BinaryNode*>(x);
        const auto* q = static_cast<const BinaryNode*>(y);
        if (!E(p->a, q->a)) return At([&] { return fmt::format("{}.a", ExprKindName(x->kind)); });
        if (!E(p->b, q->b)) return At([&] { return fmt::format("{}.b", ExprKindName(x->kind)); });
        return true;
      }
    }
  }

  bool S(const Stmt& a, const Stmt& b) {
    const StmtNode* x = a.get();
    const StmtNode* y = b.get();
    if (x == nullptr || y == nullptr) {
      if (x == y) return true;
      return Fail([&] {
        return fmt::format("statement: {} vs {}", x ? StmtKindName(x->kind) : "none",
                           y ? StmtKindName(y->kind) : "none");
      });
    }
    if (x->kind != y->kind) {
      return Fail([&] {
        return fmt::format("statement kind: {} vs {}", StmtKindName(x->kind),
                           StmtKindName(y->kind));
      });
    }
    switch (x->kind) {
      case StmtKind::kFor:
        return For(static_cast<const ForNode*>(x), static_cast<const ForNode*>(y));
      case StmtKind::kBlockRealize:
        return Realize(static_cast<const BlockRealizeNode*>(x),
                       static_cast<const BlockRealizeNode*>(y));
      case StmtKind::kBufferStore: {
        const auto* p = static_cast<const BufferStoreNode*>(x);
        const auto* q = static_cast<const BufferStoreNode*>(y);
        auto where = [&](std::string_view field) {
          return At(Step("store", p->buffer.defined() ? p->buffer.name() : "?", field));
        };
        if (!UseBuffer(p->buffer, q->buffer)) return where("buffer");
        if (!E(p->value, q->value)) return where("value");
        return Exprs(p->indices, q->indices, "indices") || where("");
      }
      case StmtKind::kSeqStmt: {
        const auto* p = static_cast<const SeqStmtNode*>(x);
        const auto* q = static_cast<const SeqStmtNode*>(y);
        if (p->seq.size() != q->seq.size()) {
          return Fail([&] {
            return fmt::format("SeqStmt length: {} vs {}", p->seq.size(), q->seq.size());
          });
        }
        for (size_t i = 0; i < p->seq.size(); ++i) {
          if (!S(p->seq[i], q->seq[i])) return At([&] { return fmt::format("seq[{}]", i); });
        }
        return true;
      }
      case StmtKind::kIfThenElse: {
        const auto* p = static_cast<const IfThenElseNode*>(x);
        const auto* q = static_cast<const IfThenElseNode*>(y);
        if (!E(p->condition, q->condition)) return At("if/condition");
        if (!S(p->then_case, q->then_case)) return At("if/then");
        if (!S(p->else_case, q->else_case)) return At("if/else");
        return true;
      }
      case StmtKind::kEvaluate:
        return E(static_cast<const EvaluateNode*>(x)->value,
                 static_cast<const EvaluateNode*>(y)->value) ||
               At("evaluate/value");
    }
    throw IRError("structural equality: unknown statement kind " +
                  std::to_string(static_cast<int>(x->kind)));
  }

  // "<path>: <difference>", valid after a comparison returned false with
  // explain set.
  std::string Describe() const {
    std::string out;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (it->empty()) continue;
      if (!out.empty()) out += '/';
      out += *it;
    }
    if (!out.empty()) out += ": ";
    out += detail_;
    return out;
  }

 private:
  // Records the difference; `make` builds its text only when explaining.
  template <typename F>
  bool Fail(F&& make) {
    if (explain_) detail_ = make();
    return false;
  }
  // Adds one step (innermost first) to the path of a recorded difference.
  template <typename F>
  bool At(F&& step) {
    if (explain_) {
      if constexpr (std::is_invocable_v<F>) {
        path_.push_back(step());
      } else {
        path_.emplace_back(step);
      }
    }
    return false;
  }

  // "for i/body", or "for i" when the difference is in the node itself.
  static std::string Step(std::string_view node, std::string_view name, std::string_view field) {
    if (field.empty()) return fmt::format("{} {}", node, name);
    return fmt::format("{} {}/{}", node, name, field);
  }

  bool Exprs(const std::vector<Expr>& a, const std::vector<Expr>& b, std::string_view what) {
    if (a.size() != b.size()) {
      return Fail([&] { return fmt::format("{} count: {} vs {}", what, a.size(), b.size()); });
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (!E(a[i], b[i])) return At([&] { return fmt::format("{}[{}]", what, i); });
    }
    return true;
  }

  bool Annots(const Annotations& a, const Annotations& b) {
    if (a.size() != b.size()) {
      return Fail([&] { return fmt::format("annotation count: {} vs {}", a.size(), b.size()); });
    }
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
      if (i->first != j->first) {
        return Fail([&] {
          return fmt::format("annotation key: {} vs {}", Quote(i->first), Quote(j->first));
        });
      }
      if (!E(i->second, j->second)) {
        return At([&] { return fmt::format("annotation {}", Quote(i->first)); });
      }
    }
    return true;
  }

  bool DefVar(const Var& a, const Var& b, std::string_view what) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return Fail([&] { return fmt::format("{}: defined vs undefined", what); });
    }
    if (a.dtype() != b.dtype()) {
      return Fail([&] {
        return fmt::format("{} {} dtype: {} vs {}", what, a.name(), a.dtype().str(),
                           b.dtype().str());
      });
    }
    vars_.Bind(a.get(), b.get());
    return true;
  }

  bool UseVar(const VarNode* a, const VarNode* b) {
    switch (vars_.Check(a, b)) {
      case ScopedBijection<VarNode>::Lookup::kMatched: return true;
      case ScopedBijection<VarNode>::Lookup::kMismatched:
        return Fail([&] {
          bool ba = vars_.IsBoundA(a), bb = vars_.IsBoundB(b);
          if (ba && bb) {
            return fmt::format("variable {} vs {}: they refer to different definitions", a->name,
                               b->name);
          }
          return fmt::format("variable {} vs {}: {} is {} but {} is {}", a->name, b->name, a->name,
                             ba ? "defined here" : "free", b->name, bb ? "defined here" : "free");
        });
      case ScopedBijection<VarNode>::Lookup::kBothFree: break;
    }
    if (!map_free_) {
      if (a == b) return true;
      return Fail([&] {
        return fmt::format("free variable {} vs {}: different variables", a->name, b->name);
      });
    }
    bool first = false;
    if (free_vars_.Match(a, b, &first)) return true;
    return Fail([&] {
      return fmt::format("free variable {} vs {}: each was matched to another before", a->name,
                         b->name);
    });
  }

  // Compares what defines a buffer's layout (not its name).
  bool BufferBody(const BufferNode& a, const BufferNode& b, std::string_view what) {
    if (a.dtype != b.dtype) {
      return Fail([&] {
        return fmt::format("{} {} dtype: {} vs {}", what, a.name, a.dtype.str(), b.dtype.str());
      });
    }
    auto dims = [&](const std::vector<Expr>& x, const std::vector<Expr>& y,
                    std::string_view field) {
      if (x.size() != y.size()) {
        return Fail([&] {
          return fmt::format("{} {} {} rank: {} vs {}", what, a.name, field, x.size(), y.size());
        });
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if (!E(x[i], y[i])) return At([&] { return fmt::format("{}[{}]", field, i); });
      }
      return true;
    };
    if (!dims(a.shape, b.shape, "shape")) return false;
    if (!dims(a.strides, b.strides, "strides")) return false;
    if (a.scope != b.scope) {
      return Fail([&] {
        return fmt::format("{} {} scope: {} vs {}", what, a.name, Quote(a.scope), Quote(b.scope));
      });
    }
    if (a.align != b.align) {
      return Fail(
          [&] { return fmt::format("{} {} align: {} vs {}", what, a.name, a.align, b.align); });
    }
    return true;
  }

  bool DefBuffer(const Buffer& a, const Buffer& b, std::string_view what) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return Fail([&] { return fmt::format("{}: defined vs undefined", what); });
    }
    if (!BufferBody(*a.get(), *b.get(), what)) return false;
    bufs_.Bind(a.get(), b.get());
    return true;
  }

  bool UseBuffer(const Buffer& a, const Buffer& b) {
    const BufferNode* x = a.get();
    const BufferNode* y = b.get();
    if (x == nullptr || y == nullptr) {
      if (x == y) return true;
      return Fail([&] { return std::string("buffer: defined vs undefined"); });
    }
    switch (bufs_.Check(x, y)) {
      case ScopedBijection<BufferNode>::Lookup::kMatched: return true;
      case ScopedBijection<BufferNode>::Lookup::kMismatched:
        return Fail([&] {
          bool ba = bufs_.IsBoundA(x), bb = bufs_.IsBoundB(y);
          if (ba && bb) {
            return fmt::format("buffer {} vs {}: they refer to different definitions", x->name,
                               y->name);
          }
          return fmt::format("buffer {} vs {}: {} is {} but {} is {}", x->name, y->name, x->name,
                             ba ? "defined here" : "free", y->name, bb ? "defined here" : "free");
        });
      case ScopedBijection<BufferNode>::Lookup::kBothFree: break;
    }
    if (!map_free_) {
      if (x == y) return true;
      return Fail(
          [&] { return fmt::format("free buffer {} vs {}: different buffers", x->name, y->name); });
    }
    bool first = false;
    if (!free_bufs_.Match(x, y, &first)) {
      return Fail([&] {
        return fmt::format("free buffer {} vs {}: each was matched to another before", x->name,
                           y->name);
      });
    }
    // The hash writes a free buffer's layout at its first use; compare it there.
    return !first || BufferBody(*x, *y, "free buffer");
  }

  bool Region(const BufferRegion& a, const BufferRegion& b) {
    if (!UseBuffer(a.buffer, b.buffer)) return At("buffer");
    if (a.region.size() != b.region.size()) {
      return Fail(
          [&] { return fmt::format("region rank: {} vs {}", a.region.size(), b.region.size()); });
    }
    for (size_t i = 0; i < a.region.size(); ++i) {
      if (!E(a.region[i].min, b.region[i].min)) {
        return At([&] { return fmt::format("region[{}].min", i); });
      }
      if (!E(a.region[i].extent, b.region[i].extent)) {
        return At([&] { return fmt::format("region[{}].extent", i); });
      }
    }
    return true;
  }

  bool Regions(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b,
               std::string_view what) {
    if (a.size() != b.size()) {
      return Fail([&] { return fmt::format("{} count: {} vs {}", what, a.size(), b.size()); });
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Region(a[i], b[i])) return At([&] { return fmt::format("{}[{}]", what, i); });
    }
    return true;
  }

  bool For(const ForNode* p, const ForNode* q) {
    // Only called on a difference, so building the step eagerly costs nothing.
    auto where = [&](std::string_view field) {
      return At(Step("for", p->loop_var.defined() ? p->loop_var.name() : "?", field));
    };
    if (!E(p->min, q->min)) return where("min");
    if (!E(p->extent, q->extent)) return where("extent");
    if (p->for_kind != q->for_kind) {
      Fail([&] {
        return fmt::format("loop kind: {} vs {}", ForKindName(p->for_kind),
                           ForKindName(q->for_kind));
      });
      return where("");
    }
    if (p->thread_tag != q->thread_tag) {
      Fail([&] {
        return fmt::format("thread tag: {} vs {}", Quote(p->thread_tag), Quote(q->thread_tag));
      });
      return where("");
    }
    if (!Annots(p->annotations, q->annotations)) return where("annotations");
    auto mark = vars_.Mark();
    bool ok = DefVar(p->loop_var, q->loop_var, "loop variable") || where("");
    ok = ok && (S(p->body, q->body) || where("body"));
    vars_.PopTo(mark);
    return ok;
  }

  bool Realize(const BlockRealizeNode* p, const BlockRealizeNode* q) {
    const BlockNode* x = p->block.get();
    const BlockNode* y = q->block.get();
    if (x == nullptr || y == nullptr) {
      if (x != y) return Fail([&] { return std::string("block: defined vs undefined"); });
      if (!Exprs(p->iter_values, q->iter_values, "iter_values")) return At("realize");
      return E(p->predicate, q->predicate) || At("realize/predicate");
    }
    if (x->name != y->name) {
      return Fail(
          [&] { return fmt::format("block name: {} vs {}", Quote(x->name), Quote(y->name)); });
    }
    // Only called on a difference, so building the step eagerly costs nothing.
    auto where = [&](std::string_view field) { return At(Step("block", Quote(x->name), field)); };
    if (x->iter_vars.size() != y->iter_vars.size()) {
      Fail([&] {
        return fmt::format("iter var count: {} vs {}", x->iter_vars.size(), y->iter_vars.size());
      });
      return where("");
    }
    if (!Exprs(p->iter_values, q->iter_values, "iter_values")) return where("");
    if (!E(p->predicate, q->predicate)) return where("predicate");
    auto var_mark = vars_.Mark();
    auto buf_mark = bufs_.Mark();
    bool ok = Block(x, y, where);
    vars_.PopTo(var_mark);
    bufs_.PopTo(buf_mark);
    return ok;
  }

  // The part of a block inside its scope (bindings are popped by the caller).
  template <typename Where>
  bool Block(const BlockNode* x, const BlockNode* y, const Where& where) {
    for (size_t i = 0; i < x->iter_vars.size(); ++i) {
      const IterVar& u = x->iter_vars[i];
      const IterVar& v = y->iter_vars[i];
      auto at = [&](std::string_view field) {
        return where(fmt::format("iter_vars[{}]{}", i, field));
      };
      if (u.iter_type != v.iter_type) {
        Fail([&] {
          return fmt::format("iter type: {} vs {}", IterTypeName(u.iter_type),
                             IterTypeName(v.iter_type));
        });
        return at("");
      }
      if (!E(u.dom.min, v.dom.min)) return at(".dom.min");
      if (!E(u.dom.extent, v.dom.extent)) return at(".dom.extent");
      if (!DefVar(u.var, v.var, "iter variable")) return at("");
    }
    if (x->alloc_buffers.size() != y->alloc_buffers.size()) {
      Fail([&] {
        return fmt::format("alloc_buffers count: {} vs {}", x->alloc_buffers.size(),
                           y->alloc_buffers.size());
      });
      return where("");
    }
    for (size_t i = 0; i < x->alloc_buffers.size(); ++i) {
      if (!DefBuffer(x->alloc_buffers[i], y->alloc_buffers[i], "alloc buffer")) {
        return where(fmt::format("alloc_buffers[{}]", i));
      }
    }
    if (!Regions(x->reads, y->reads, "reads")) return where("");
    if (!Regions(x->writes, y->writes, "writes")) return where("");
    if (x->init.has_value() != y->init.has_value()) {
      Fail([&] {
        return fmt::format("init: {} vs {}", x->init ? "present" : "absent",
                           y->init ? "present" : "absent");
      });
      return where("");
    }
    if (x->init && !S(*x->init, *y->init)) return where("init");
    if (!S(x->body, y->body)) return where("body");
    if (!Annots(x->annotations, y->annotations)) return where("annotations");
    return true;
  }

  const bool map_free_;
  const bool explain_;
  ScopedBijection<VarNode> vars_;
  ScopedBijection<BufferNode> bufs_;
  FirstUseBijection<VarNode> free_vars_;
  FirstUseBijection<BufferNode> free_bufs_;
  std::string detail_;
  std::vector<std::string> path_;  // innermost step first
};

template <typename T>
std::optional<std::string> Explain(const T& a, const T& b, bool map_free) {
  Checker c(map_free, /*explain=*/true);
  bool equal;
  if constexpr (std::is_same_v<T, PrimFunc>) {
    equal = c.Func(a, b);
  } else if constexpr (std::is_same_v<T, Expr>) {
    equal = c.E(a, b);
  } else {
    equal = c.S(a, b);
  }
  if (equal) return std::nullopt;
  return c.Describe();
}

}  // namespace

bool StructuralEqual(const PrimFunc& a, const PrimFunc& b) {
  return Checker(/*map_free=*/true, /*explain=*/false).Func(a, b);
}
bool StructuralEqual(const Expr& a, const Expr& b) {
  return Checker(/*map_free=*/false, /*explain=*/false).E(a, b);
}
bool StructuralEqual(const Stmt& a, const Stmt& b) {
  return Checker(/*map_free=*/false, /*explain=*/false).S(a, b);
}

std::optional<std::string> StructuralMismatch(const PrimFunc& a, const PrimFunc& b) {
  return Explain(a, b, /*map_free=*/true);
}
std::optional<std::string> StructuralMismatch(const Expr& a, const Expr& b) {
  return Explain(a, b, /*map_free=*/false);
}
std::optional<std::string> StructuralMismatch(const Stmt& a, const Stmt& b) {
  return Explain(a, b, /*map_free=*/false);
}

}  // namespace kiln::ir
