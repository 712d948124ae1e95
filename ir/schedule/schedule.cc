#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

const char* KindWord(RVKind k) {
  switch (k) {
    case RVKind::kBlock: return "block";
    case RVKind::kLoop: return "loop";
    case RVKind::kExpr: return "expression";
  }
  return "?";
}

}  // namespace

Schedule::Schedule(PrimFunc func, int64_t seed) : func_(std::move(func)), rng_(seed) {
  // A tuning trace makes a few dozen handles: grow the table once, not
  // by doubling from one.
  symbols_.reserve(64);
}

Schedule Schedule::Copy() {
  Schedule copy = *this;
  copy.rng_.Seed(rng_.ForkSeed());
  return copy;
}

const Schedule::Symbol& Schedule::Lookup(RVRef ref, RVKind expected) const {
  if (ref.kind != expected) {
    throw ScheduleError("handle", std::string("expected a ") + KindWord(expected) +
                                      " handle, got a " + KindWord(ref.kind) + " handle");
  }
  if (ref.id < 0 || ref.id >= static_cast<int>(symbols_.size()) ||
      symbols_[ref.id].kind != expected) {
    throw ScheduleError("handle", std::string("unknown ") + KindWord(expected) + " handle #" +
                                      std::to_string(ref.id));
  }
  return symbols_[ref.id];
}

StmtPath Schedule::PathOf(BlockRV b) const {
  const Symbol& s = Lookup(b.ref(), RVKind::kBlock);
  auto path = FindBlockPath(func_, s.block_name);
  if (!path) {
    throw ScheduleError("handle", "block '" + s.block_name +
                                      "' no longer exists (a primitive removed or inlined it)");
  }
  return std::move(*path);
}

StmtPath Schedule::PathOf(LoopRV l) const {
  const Symbol& s = Lookup(l.ref(), RVKind::kLoop);
  if (s.mark != LoopMark::kNone) {
    throw ScheduleError("handle", std::string("the ") +
                                      (s.mark == LoopMark::kInline ? "inline" : "root") +
                                      " location mark is not a loop");
  }
  auto path = FindLoopPath(func_, s.loop_var.get());
  if (!path) {
    throw ScheduleError("handle", "loop " + s.loop_var->name +
                                      " no longer exists (a primitive such as split, fuse or "
                                      "compute_at replaced it)");
  }
  return std::move(*path);
}

const BlockRealizeNode& Schedule::GetRealize(BlockRV b) const {
  return *PathOf(b).back().as<BlockRealizeNode>();
}

const ForNode& Schedule::Get(LoopRV l) const { return *PathOf(l).back().as<ForNode>(); }

int64_t Schedule::Get(ExprRV v) const { return Lookup(v.ref(), RVKind::kExpr).value; }

std::string Schedule::NameOf(BlockRV b) const { return Lookup(b.ref(), RVKind::kBlock).block_name; }

std::string Schedule::NameOf(LoopRV l) const {
  const Symbol& s = Lookup(l.ref(), RVKind::kLoop);
  if (s.mark == LoopMark::kInline) return "<inline mark>";
  if (s.mark == LoopMark::kRoot) return "<root mark>";
  return s.loop_var->name;
}

bool Schedule::HasBlock(const std::string& name) const {
  return FindBlockPath(func_, name).has_value();
}

bool Schedule::IsInlineMark(LoopRV l) const {
  return Lookup(l.ref(), RVKind::kLoop).mark == LoopMark::kInline;
}

bool Schedule::IsRootMark(LoopRV l) const {
  return Lookup(l.ref(), RVKind::kLoop).mark == LoopMark::kRoot;
}

BlockRV Schedule::NewBlockRV(const std::string& block_name) {
  Symbol s{RVKind::kBlock, block_name, nullptr, LoopMark::kNone, 0};
  symbols_.push_back(std::move(s));
  return BlockRV{static_cast<int>(symbols_.size()) - 1};
}

void Schedule::RenameBlockHandles(const std::string& from, const std::string& to) {
  for (Symbol& s : symbols_) {
    if (s.kind == RVKind::kBlock && s.block_name == from) s.block_name = to;
  }
}

LoopRV Schedule::NewLoopRV(const Var& loop_var) {
  Symbol s{RVKind::kLoop, "", std::static_pointer_cast<const VarNode>(loop_var.node()),
           LoopMark::kNone, 0};
  symbols_.push_back(std::move(s));
  return LoopRV{static_cast<int>(symbols_.size()) - 1};
}

LoopRV Schedule::NewMarkRV(LoopMark mark) {
  symbols_.push_back(Symbol{RVKind::kLoop, "", nullptr, mark, 0});
  return LoopRV{static_cast<int>(symbols_.size()) - 1};
}

ExprRV Schedule::NewExprRV(int64_t value) {
  symbols_.push_back(Symbol{RVKind::kExpr, "", nullptr, LoopMark::kNone, value});
  return ExprRV{static_cast<int>(symbols_.size()) - 1};
}

void Schedule::Record(const std::string& kind, std::vector<InstArg> inputs, nlohmann::json attrs,
                      std::vector<RVRef> outputs, std::optional<nlohmann::json> decision) {
  Instruction inst;
  inst.kind = kind;
  inst.inputs = std::move(inputs);
  inst.attrs = std::move(attrs);
  inst.outputs = std::move(outputs);
  trace_.Append(std::move(inst), std::move(decision));
}

bool Schedule::KnowsFact(const ScheduleFact& fact) const {
  for (const ScheduleFact& f : facts_) {
    if (f == fact) return true;
  }
  return false;
}

InstArg Schedule::Arg(BlockOrLoop t) {
  if (const auto* b = std::get_if<BlockRV>(&t)) return InstArg::Of(b->ref());
  return InstArg::Of(std::get<LoopRV>(t).ref());
}

}  // namespace kiln::ir
