// DisallowDynamicLoop: a candidate whose loops are not all of constant extent
// cannot be built; reject it, naming the loop.
#include "ir/functor.h"
#include "search/postproc.h"

namespace kiln::search {
namespace {

class DynamicLoopFinder : public ir::IRVisitor {
 public:
  std::string found;

 protected:
  void VisitFor(const ir::ForNode* op) override {
    if (found.empty() && !op->extent.as<ir::IntImmNode>()) found = op->loop_var.name();
    ir::IRVisitor::VisitFor(op);
  }
};

class DisallowDynamicLoop : public Postproc {
 public:
  std::string Name() const override { return "DisallowDynamicLoop"; }
  bool Apply(ir::Schedule* sch, std::string* why) override {
    DynamicLoopFinder f;
    f.VisitStmt(sch->func().body);
    if (f.found.empty()) return true;
    if (why) *why = "loop '" + f.found + "' has a non-constant extent";
    return false;
  }
};

}  // namespace

PostprocPtr MakeDisallowDynamicLoop() { return std::make_shared<DisallowDynamicLoop>(); }

}  // namespace kiln::search
