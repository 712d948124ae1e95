// FlattenBuffer: every buffer becomes one-dimensional, so a backend indexes
// plain pointers. The offset is row-major over the shape, or the dot product
// with the buffer's strides when it has them (storage alignment).
#include <unordered_map>

#include "ir/arith/analyzer.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

struct Flat {
  Buffer buffer;
  std::vector<Expr> strides;
};

Flat MakeFlat(const Buffer& b, arith::Analyzer* an) {
  const BufferNode& n = *b.get();
  std::vector<Expr> strides = n.strides;
  if (!strides.empty() && strides.size() != n.shape.size()) {
    throw IRError("flatten_buffer: buffer '" + n.name + "' has " +
                  std::to_string(strides.size()) + " strides for " +
                  std::to_string(n.shape.size()) + " dimensions");
  }
  Expr size;
  if (strides.empty()) {
    strides.resize(n.shape.size());
    Expr s = IntImm(1);
    for (size_t k = n.shape.size(); k-- > 0;) {
      strides[k] = s;
      s = an->Simplify(Mul(s, n.shape[k]));
    }
    size = s;
  } else {
    // One past the last element reachable with these strides.
    size = IntImm(1);
    for (size_t k = 0; k < n.shape.size(); ++k) {
      size = Add(size, Mul(Sub(n.shape[k], IntImm(1)), strides[k]));
    }
    size = an->Simplify(size);
  }
  auto flat = std::make_shared<BufferNode>(n);
  flat->shape = {size};
  flat->strides.clear();
  return Flat{Buffer(std::move(flat)), strides};
}

class Flattener : public IRMutator {
 public:
  explicit Flattener(arith::Analyzer* an) : an_(an) {}

  const Flat& Get(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it == flat_.end()) it = flat_.emplace(b.get(), MakeFlat(b, an_)).first;
    return it->second;
  }

 protected:
  Buffer VisitBuffer(const Buffer& b) override { return Get(b).buffer; }

  Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op) override {
    (void)e;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(VisitExpr(i));
    const Flat& f = Get(op->buffer);
    return BufferLoad(f.buffer, {Offset(idx, f, op->buffer)});
  }
  Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op) override {
    (void)s;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(VisitExpr(i));
    const Flat& f = Get(op->buffer);
    return BufferStore(f.buffer, VisitExpr(op->value), {Offset(idx, f, op->buffer)});
  }

 private:
  Expr Offset(const std::vector<Expr>& idx, const Flat& f, const Buffer& orig) {
    if (idx.size() != f.strides.size()) {
      throw IRError("flatten_buffer: an access to buffer '" + orig.name() + "' has " +
                    std::to_string(idx.size()) + " indices for " +
                    std::to_string(f.strides.size()) + " dimensions");
    }
    if (idx.empty()) return IntImm(0);
    Expr off;
    for (size_t k = 0; k < idx.size(); ++k) {
      Expr term = IsConstInt(f.strides[k], 1) ? idx[k] : Mul(idx[k], f.strides[k]);
      off = off.defined() ? Add(off, term) : term;
    }
    return off;
  }

  arith::Analyzer* an_;
  std::unordered_map<const BufferNode*, Flat> flat_;
};

}  // namespace

PrimFunc FlattenBuffer(const PrimFunc& func) {
  arith::Analyzer an;
  Flattener fl(&an);
  PrimFunc out = func;
  for (auto& p : out.params) p = fl.Get(p).buffer;
  out.body = fl.VisitStmt(func.body);
  return out;
}

}  // namespace kiln::ir::transform
