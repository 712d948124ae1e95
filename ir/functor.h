// One visitor and one mutator for the whole IR (expressions and statements).
//
// IRVisitor walks every child by default; override a Visit* method and call
// the base to keep walking. IRMutator rebuilds a node only when a child
// changed, so unchanged subtrees keep their identity (same_as).
#pragma once

#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void VisitExpr(const Expr& e);
  virtual void VisitStmt(const Stmt& s);

 protected:
  virtual void VisitIntImm(const IntImmNode*) {}
  virtual void VisitFloatImm(const FloatImmNode*) {}
  virtual void VisitStringImm(const StringImmNode*) {}
  virtual void VisitVar(const VarNode*) {}
  virtual void VisitBinary(const BinaryNode* op);
  virtual void VisitNot(const NotNode* op);
  virtual void VisitSelect(const SelectNode* op);
  virtual void VisitCast(const CastNode* op);
  virtual void VisitBufferLoad(const BufferLoadNode* op);
  virtual void VisitCall(const CallNode* op);
  virtual void VisitRamp(const RampNode* op);
  virtual void VisitBroadcast(const BroadcastNode* op);

  virtual void VisitFor(const ForNode* op);
  virtual void VisitBlockRealize(const BlockRealizeNode* op);
  // Called from VisitBlockRealize; visits iter var domains, regions, init, body.
  virtual void VisitBlock(const BlockNode* op);
  virtual void VisitBufferStore(const BufferStoreNode* op);
  virtual void VisitSeqStmt(const SeqStmtNode* op);
  virtual void VisitIfThenElse(const IfThenElseNode* op);
  virtual void VisitEvaluate(const EvaluateNode* op);

  // Helpers for derived visitors.
  void VisitRange(const Range& r);
  void VisitRegion(const BufferRegion& r);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr VisitExpr(const Expr& e);
  virtual Stmt VisitStmt(const Stmt& s);

 protected:
  // Each receives the handle (to return unchanged) and the typed node.
  virtual Expr VisitIntImm(const Expr& e, const IntImmNode*) { return e; }
  virtual Expr VisitFloatImm(const Expr& e, const FloatImmNode*) { return e; }
  virtual Expr VisitStringImm(const Expr& e, const StringImmNode*) { return e; }
  virtual Expr VisitVar(const Expr& e, const VarNode*) { return e; }
  virtual Expr VisitBinary(const Expr& e, const BinaryNode* op);
  virtual Expr VisitNot(const Expr& e, const NotNode* op);
  virtual Expr VisitSelect(const Expr& e, const SelectNode* op);
  virtual Expr VisitCast(const Expr& e, const CastNode* op);
  virtual Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op);
  virtual Expr VisitCall(const Expr& e, const CallNode* op);
  virtual Expr VisitRamp(const Expr& e, const RampNode* op);
  virtual Expr VisitBroadcast(const Expr& e, const BroadcastNode* op);

  virtual Stmt VisitFor(const Stmt& s, const ForNode* op);
  virtual Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op);
  // Called from VisitBlockRealize; returns the block unchanged if no child changed.
  virtual Block VisitBlock(const Block& b);
  virtual Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op);
  virtual Stmt VisitSeqStmt(const Stmt& s, const SeqStmtNode* op);
  virtual Stmt VisitIfThenElse(const Stmt& s, const IfThenElseNode* op);
  virtual Stmt VisitEvaluate(const Stmt& s, const EvaluateNode* op);

  // Buffers are not rewritten by default; override to substitute them
  // (applied to loads, stores, regions and alloc_buffers).
  virtual Buffer VisitBuffer(const Buffer& b) { return b; }

  Range VisitRange(const Range& r);
  BufferRegion VisitRegion(const BufferRegion& r);
};

}  // namespace kiln::ir
