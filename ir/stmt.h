// Statements of the Kiln IR: loops, blocks, stores and control flow.
//
// Like expressions, statement nodes are immutable and shared; transformations
// build new trees and reuse every unchanged subtree.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"

namespace kiln::ir {

enum class StmtKind : uint8_t {
  kFor,
  kBlockRealize,
  kBufferStore,
  kSeqStmt,
  kIfThenElse,
  kEvaluate,
};

// Annotation values are IntImm, FloatImm or StringImm expressions. Keys are
// kept sorted so the printed and hashed forms are canonical.
using Annotations = std::map<std::string, Expr>;

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const StmtNode>& node() const { return node_; }
  StmtKind kind() const { return node_->kind; }

  // Downcast: returns nullptr if the node is not a T (the convention of
  // Expr::as in ir/expr.h: each node type says which kinds it takes with a
  // static Matches).
  template <typename T>
  const T* as() const {
    return node_ && T::Matches(node_->kind) ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };

const char* ForKindName(ForKind k);  // "serial", "parallel", ...

struct ForNode : StmtNode {
  ForNode() : StmtNode(StmtKind::kFor) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kFor; }
  Var loop_var;
  Expr min;
  Expr extent;
  ForKind for_kind = ForKind::kSerial;
  std::string thread_tag;  // for kThreadBinding: "threadIdx.x", "blockIdx.y", ...
  Annotations annotations;
  Stmt body;
};

// How a block iteration variable may be iterated.
enum class IterType : uint8_t {
  kDataPar,   // spatial: "S"
  kCommReduce,  // reduction: "R"
  kOrdered,   // scan: "O"
  kOpaque,    // opaque: "X"
};

struct IterVar {
  Var var;
  Range dom;
  IterType iter_type = IterType::kDataPar;
};

struct BlockNode {
  std::string name;  // unique within a function: schedules address blocks by it
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  std::optional<Stmt> init;  // runs before the first reduction step
  Stmt body;
  std::vector<Buffer> alloc_buffers;
  Annotations annotations;
};

// A handle to an immutable block (blocks are not statements on their own: a
// BlockRealize places one in the tree with its bindings).
class Block {
 public:
  Block() = default;
  explicit Block(std::shared_ptr<const BlockNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const BlockNode* get() const { return node_.get(); }
  const BlockNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const BlockNode>& node() const { return node_; }
  bool same_as(const Block& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const BlockNode> node_;
};

struct BlockRealizeNode : StmtNode {
  BlockRealizeNode() : StmtNode(StmtKind::kBlockRealize) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kBlockRealize; }
  std::vector<Expr> iter_values;  // one binding per block iter var
  Expr predicate;                 // bool; the block runs only where it holds
  Block block;
};

struct BufferStoreNode : StmtNode {
  BufferStoreNode() : StmtNode(StmtKind::kBufferStore) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kBufferStore; }
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
};

struct SeqStmtNode : StmtNode {
  SeqStmtNode() : StmtNode(StmtKind::kSeqStmt) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kSeqStmt; }
  std::vector<Stmt> seq;
};

struct IfThenElseNode : StmtNode {
  IfThenElseNode() : StmtNode(StmtKind::kIfThenElse) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kIfThenElse; }
  Expr condition;
  Stmt then_case;
  Stmt else_case;  // may be undefined
};

struct EvaluateNode : StmtNode {
  EvaluateNode() : StmtNode(StmtKind::kEvaluate) {}
  static bool Matches(StmtKind k) { return k == StmtKind::kEvaluate; }
  Expr value;
};

}  // namespace kiln::ir
