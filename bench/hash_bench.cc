// Speed of StructuralHash and StructuralEqual on a function with about
// 10,000 statements, against a plain IRVisitor walk of the same tree (the
// least any whole-tree pass can cost). Prints figures; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ir/ir.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace {

using namespace kiln::ir;

constexpr int kNests = 100;          // loop nests in the root block
constexpr int kStoresPerNest = 100;  // stores in each nest's body
constexpr int kRepeats = 30;

// kNests loop nests `for i, j: { C[i, j] = A[i, s] * B[s, j] + s ... }`.
PrimFunc BuildLarge(const std::string& prefix) {
  const int64_t n = kStoresPerNest;
  Buffer a(prefix + "A", DataType::Float32(), {IntImm(64), IntImm(n)});
  Buffer b(prefix + "B", DataType::Float32(), {IntImm(n), IntImm(64)});
  Buffer c(prefix + "C", DataType::Float32(), {IntImm(64), IntImm(64)});
  std::vector<Stmt> nests;
  for (int t = 0; t < kNests; ++t) {
    Var i(prefix + "i"), j(prefix + "j");
    std::vector<Stmt> body;
    for (int s = 0; s < kStoresPerNest; ++s) {
      Expr v = BufferLoad(a, {i, IntImm(s)}) * BufferLoad(b, {IntImm(s), j}) +
               FloatImm(static_cast<double>(s + t));
      body.push_back(BufferStore(c, v, {i, j}));
    }
    nests.push_back(For(i, IntImm(0), IntImm(64), ForKind::kSerial,
                        For(j, IntImm(0), IntImm(64), ForKind::kSerial, SeqStmt(std::move(body)))));
  }
  PrimFunc f;
  f.params = {a, b, c};
  f.body = MakeRootBody(SeqStmt(std::move(nests)));
  return f;
}

class NodeCounter : public IRVisitor {
 public:
  int64_t exprs = 0, stmts = 0;
  void VisitExpr(const Expr& e) override {
    if (e.defined()) ++exprs;
    IRVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (s.defined()) ++stmts;
    IRVisitor::VisitStmt(s);
  }
};

// Best wall time of kRepeats runs, in seconds.
template <typename F>
double BestOf(F&& f) {
  return kiln::bench::BestSeconds(kRepeats, f);
}

}  // namespace

int main() {
  PrimFunc f = BuildLarge("x_");
  PrimFunc g = BuildLarge("y_");  // built independently, other names

  NodeCounter counter;
  counter.VisitStmt(f.body);
  std::printf("function: %lld statements, %lld expression nodes\n",
              static_cast<long long>(counter.stmts), static_cast<long long>(counter.exprs));

  uint64_t sink = 0;
  double walk = BestOf([&] {
    NodeCounter c;
    c.VisitStmt(f.body);
    sink += static_cast<uint64_t>(c.exprs);
  });
  double hash = BestOf([&] { sink += StructuralHash(f); });
  bool equal = true;
  double eq = BestOf([&] { equal = equal && StructuralEqual(f, g); });

  std::printf("hash   %s (same for the renamed copy: %s)\n", StructuralHashHex(f).c_str(),
              StructuralHash(f) == StructuralHash(g) ? "yes" : "NO");
  std::printf("StructuralHash   best of %d: %8.3f ms  (%.0f hashes/s)\n", kRepeats, hash * 1e3,
              1.0 / hash);
  std::printf("StructuralEqual  best of %d: %8.3f ms  (%.0f comparisons/s, equal: %s)\n", kRepeats,
              eq * 1e3, 1.0 / eq, equal ? "yes" : "NO");
  std::printf("IRVisitor walk   best of %d: %8.3f ms  (peer)\n", kRepeats, walk * 1e3);
  std::printf("ratio hash / walk: %.2fx   equal / walk: %.2fx\n", hash / walk, eq / walk);
  return sink == 42 ? 1 : 0;  // keeps the work observable
}
