// Internal to the verifier: the checker class shared by ir/verify/*.cc.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/arith/analyzer.h"
#include "ir/arith/const_int_bound.h"
#include "ir/functor.h"
#include "ir/prim_func.h"
#include "ir/verify.h"

namespace kiln::ir::verify_internal {

using arith::ConstIntBound;

inline std::string Q(const std::string& s) { return "'" + s + "'"; }
inline std::string VarName(const Var& v) { return v.defined() ? v.name() : "?"; }
inline std::string BufName(const Buffer& b) { return b.defined() ? b.name() : "?"; }

inline bool Finite(const ConstIntBound& b) {
  return b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf;
}

// start + extent - 1, the last element of a range; false on overflow.
inline bool LastOf(int64_t start, int64_t extent, int64_t* last) {
  return !__builtin_add_overflow(start, extent - 1, last);
}

enum class VarKind { kShape, kLoop, kIter };

struct VarDef {
  VarKind kind;
  size_t frame;       // the frame whose body defines the variable
  std::string owner;  // "loop 'i' in block 'root'", "block 'C'"
};

// A buffer region relaxed over the block's iteration domain.
struct Box {
  const BufferNode* buffer;
  std::vector<ConstIntBound> dims;  // an unknown dimension is unbounded
};

// One block (or the function itself at index 0).
struct Frame {
  std::string name;
  bool opaque = true;  // no iter vars: enclosing variables stay visible inside
  bool check_accesses = false;
  bool has_init = false;  // a reduction may read back what it writes
  std::vector<Box> reads, writes;
  std::set<const BufferNode*> allocs;  // local to the block: not in its regions
  // Buffers written by the child blocks visited so far: a reduction block
  // without init may update what an earlier sibling initialised (the result
  // of decompose_reduction).
  std::set<const BufferNode*> child_writes;
};

// A variable range replaced while a guard is in force, to be put back; or,
// with `fact` set, an ExprFact pushed that must be popped.
struct Narrowing {
  Var var;
  ConstIntBound old;
  bool fact = false;
};

// A guard conjunct on a whole expression (`1 <= v_h + v_rh`): an index that
// differs from `expr` by a constant is bounded through it.
struct ExprFact {
  Expr expr;
  ConstIntBound bound;  // one side may be unbounded
};

// One pass over a PrimFunc that collects every issue it finds. Scopes are
// tracked as frames, one per block, because a block hides the variables
// defined outside it unless it is opaque (has no iter vars).
class Verifier : public IRVisitor {
 public:
  explicit Verifier(const PrimFunc& f) : func_(f) {}

  std::vector<VerifyIssue> Run();

 private:
  // ---- reporting -------------------------------------------------------------

  std::string Where() const;
  void Report(const std::string& message);
  // Expression issues say which expression they were found in.
  void ReportExpr(const std::string& message);

  // Visits e as `what`; returns true if e is present and raised no issue.
  bool CheckExpr(const Expr& e, const std::string& what);
  bool CheckIntExpr(const Expr& e, const std::string& what);
  bool Boundable(const Expr& e) const;

  // ---- variables -------------------------------------------------------------

  // Returns true when v became defined here (and must be undefined later).
  bool Define(const Var& v, VarKind kind, const std::string& owner);
  void Undefine(const Var& v);
  void VisitVar(const VarNode* v) override;

  // ---- buffers ---------------------------------------------------------------

  // Returns true if b is present and declared here.
  bool UseBuffer(const Buffer& b, const std::string& what);

  // Checks a declared buffer's own fields; `alloc` requires a constant shape.
  void CheckBufferDecl(const Buffer& b, bool alloc);
  void Declare(const Buffer& b, const std::string& owner);
  void CheckParams();

  // ---- expressions -----------------------------------------------------------

  void VisitExpr(const Expr& e) override;
  void VisitBinary(const BinaryNode* op) override;
  void VisitNot(const NotNode* op) override;
  void VisitSelect(const SelectNode* op) override;
  void VisitCall(const CallNode* op) override;
  void VisitRamp(const RampNode* op) override;

  // Checks indices against the buffer; returns true if all are clean.
  bool CheckIndices(const Buffer& b, const std::vector<Expr>& indices, const std::string& what);
  void VisitBufferLoad(const BufferLoadNode* op) override;

  // ---- accesses and regions --------------------------------------------------

  // The bound of e under the variable ranges and the guard facts in force.
  ConstIntBound BoundOf(const Expr& e) const;
  // The bound of each index, or false if some index cannot be bounded.
  bool IndexBounds(const std::vector<Expr>& indices, std::vector<ConstIntBound>* out) const;

  // The innermost frame whose declared regions govern accesses, if any.
  const Frame* AccessFrame() const;
  void CheckAccess(const Buffer& b, const std::vector<Expr>& indices, bool is_store);

  // Checks one T.reads / T.writes entry and returns its relaxed box.
  void CheckRegion(const BufferRegion& r, const char* kind, std::vector<Box>* boxes);

  // ---- statements ------------------------------------------------------------

  void CheckStmt(const Stmt& s, const std::string& what);
  void VisitBufferStore(const BufferStoreNode* op) override;
  void VisitSeqStmt(const SeqStmtNode* op) override;
  void VisitIfThenElse(const IfThenElseNode* op) override;
  void VisitEvaluate(const EvaluateNode* op) override;
  void VisitFor(const ForNode* op) override;
  void VisitBlockRealize(const BlockRealizeNode* op) override;
  void VisitRealize(const BlockRealizeNode* op, bool is_root);

  // ---- guards (guards.cc) -----------------------------------------------------

  // Lower / upper limits the predicate puts on `value` (conjuncts comparing
  // it with something boundable).
  void ApplyPredicate(const Expr& pred, const Expr& value, ConstIntBound* r) const;
  // Narrows the ranges of the variables that cond (if `holds`) or its negation
  // constrains, recording the old ranges in undo.
  void Narrow(const Expr& cond, bool holds, std::vector<Narrowing>* undo);
  // Narrows the variable in target (a variable plus a constant) by
  // "target k other".
  void NarrowBy(const Expr& target, ExprKind k, const Expr& other, std::vector<Narrowing>* undo);
  void Restore(std::vector<Narrowing>* undo);
  // Visits e with cond (or its negation) in force.
  void VisitGuarded(const Expr& cond, bool holds, const Expr& e);
  // The range of binding i under the enclosing loops, narrowed by the
  // predicate when pred_ok; reports it if it leaves the iter var's domain.
  ConstIntBound CheckBindingRange(const BlockRealizeNode* op, size_t i, bool pred_ok);
  // The exact range of value over the points of its loops where pred holds,
  // when the loops have constant ranges and few points (binding_enumeration.cc).
  bool EnumeratedRange(const Expr& value, const Expr& pred, ConstIntBound* out) const;

  // Returns true if the domain is clean (safe to bound).
  bool CheckIterVar(const IterVar& iv);
  // binding_ranges, when not empty, bounds each iter var beyond its domain.
  void VisitBlockBody(const BlockNode* b, bool is_root,
                      const std::vector<ConstIntBound>& binding_ranges = {});
  void CheckInit(const BlockNode* b, bool has_reduce);
  const PrimFunc& func_;
  std::vector<VerifyIssue> issues_;
  std::set<std::string> reported_;  // drops repeats of one issue
  size_t problems_ = 0;             // counts repeats too, for CheckExpr
  std::string where_override_;
  std::string ctx_;  // the expression being checked, for messages

  std::vector<Frame> frames_;
  std::unordered_map<const VarNode*, VarDef> defined_;
  std::unordered_map<const VarNode*, std::string> ever_defined_;
  std::unordered_map<const BufferNode*, std::string> declared_;
  std::unordered_map<const BufferNode*, std::string> ever_declared_;
  std::set<std::string> block_names_;
  // Thread tags bound by enclosing loops: the loop (its extent and variable).
  std::map<std::string, const ForNode*> active_threads_;
  const BlockNode* binding_block_ = nullptr;  // bindings of this block are being checked
  const BlockNode* in_init_ = nullptr;        // the init of this block is being checked
  arith::ConstIntBoundAnalyzer analyzer_;
  // The loops in scope, for enumerating bindings whose loop extents depend
  // on outer loops; `order` grows inward.
  struct LoopDef {
    Expr min, extent;
    size_t order;
  };
  std::unordered_map<const VarNode*, LoopDef> loops_;
  size_t loop_order_ = 0;
  std::vector<ExprFact> facts_;         // guards on expressions now in force
  mutable arith::Analyzer simplifier_;  // no variable bounds: only rewrites
};

}  // namespace kiln::ir::verify_internal
