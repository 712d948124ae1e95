// get_block, get_loops, get_child_blocks, get_producers, get_consumers: the
// pure lookups every schedule program starts with.
#include <algorithm>

#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

// The sibling blocks of `block` under its scope block, in program order.
std::vector<const BlockRealizeNode*> Siblings(const StmtPath& path) {
  int scope = ScopeIndex(path);
  if (scope < 0) return {};
  return ChildBlockRealizes(path[scope]);
}

}  // namespace

BlockRV Schedule::GetBlock(const std::string& name, const std::string& func_name) {
  if (func_name != "main" && func_name != func_.name) {
    throw ScheduleError("get_block", "no function named '" + func_name + "' (the schedule works on '" +
                                         func_.name + "')");
  }
  if (!FindBlockPath(func_, name)) {
    std::string names;
    for (const auto* r : AllBlockRealizes(func_)) {
      if (r->block->name == "root") continue;
      names += (names.empty() ? "" : ", ") + r->block->name;
    }
    throw ScheduleError("get_block", "no block named '" + name + "' (blocks: " + names + ")");
  }
  BlockRV out = NewBlockRV(name);
  Record(instruction_kinds::GetBlock().name, {}, nlohmann::json::array({name, func_name}),
         {out.ref()});
  return out;
}

std::vector<LoopRV> Schedule::GetLoops(BlockRV block) {
  StmtPath path = PathOf(block);
  std::vector<const ForNode*> loops = LoopsAbove(path);
  std::vector<LoopRV> out;
  std::vector<RVRef> refs;
  out.reserve(loops.size());
  refs.reserve(loops.size());
  for (const ForNode* loop : loops) {
    out.push_back(NewLoopRV(loop->loop_var));
    refs.push_back(out.back().ref());
  }
  Record(instruction_kinds::GetLoops().name, {InstArg::Of(block.ref())}, nlohmann::json::array(),
         refs);
  return out;
}

std::vector<BlockRV> Schedule::GetChildBlocks(BlockOrLoop scope) {
  Stmt root;
  if (const auto* b = std::get_if<BlockRV>(&scope)) {
    root = PathOf(*b).back();
  } else {
    root = PathOf(std::get<LoopRV>(scope)).back();
  }
  std::vector<BlockRV> out;
  std::vector<RVRef> refs;
  // For a loop, the blocks directly under it (a block that is the loop's
  // whole body counts); for a block, the blocks directly inside it.
  for (const BlockRealizeNode* child : ChildBlockRealizes(root)) {
    out.push_back(NewBlockRV(child->block->name));
    refs.push_back(out.back().ref());
  }
  Record(instruction_kinds::GetChildBlocks().name, {Arg(scope)}, nlohmann::json::array(), refs);
  return out;
}

std::vector<BlockRV> Schedule::GetProducers(BlockRV block) {
  StmtPath path = PathOf(block);
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  std::vector<BlockRV> out;
  std::vector<RVRef> refs;
  for (const BlockRealizeNode* s : Siblings(path)) {
    const BlockNode* other = s->block.get();
    if (other == self) break;  // producers come before the block
    bool produces = std::any_of(other->writes.begin(), other->writes.end(),
                                [&](const BufferRegion& w) { return Touches(self->reads, w.buffer.get()); });
    if (produces) {
      out.push_back(NewBlockRV(other->name));
      refs.push_back(out.back().ref());
    }
  }
  Record(instruction_kinds::GetProducers().name, {InstArg::Of(block.ref())},
         nlohmann::json::array(), refs);
  return out;
}

std::vector<BlockRV> Schedule::GetConsumers(BlockRV block) {
  StmtPath path = PathOf(block);
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  std::vector<BlockRV> out;
  std::vector<RVRef> refs;
  bool after = false;
  for (const BlockRealizeNode* s : Siblings(path)) {
    const BlockNode* other = s->block.get();
    if (other == self) {
      after = true;
      continue;
    }
    if (!after) continue;
    bool consumes = std::any_of(self->writes.begin(), self->writes.end(),
                                [&](const BufferRegion& w) { return Touches(other->reads, w.buffer.get()); });
    if (consumes) {
      out.push_back(NewBlockRV(other->name));
      refs.push_back(out.back().ref());
    }
  }
  Record(instruction_kinds::GetConsumers().name, {InstArg::Of(block.ref())},
         nlohmann::json::array(), refs);
  return out;
}

namespace instruction_kinds {

namespace {

std::vector<RVRef> Refs(const std::vector<BlockRV>& v) {
  std::vector<RVRef> out;
  for (const auto& b : v) out.push_back(b.ref());
  return out;
}

// A pure kind taking one block (or block/loop) input and returning blocks or loops.
InstructionKind BlockQuery(const std::string& name,
                           std::vector<RVRef> (*run)(Schedule&, const kind_definition::Args&)) {
  return kind_definition::DefineKind(
      name, {/*is_pure=*/true, /*has_decision=*/false},
      [run](Schedule& sch, const kind_definition::Args& a) {
        a.ExpectInputs(1);
        a.ExpectAttrs(0);
        return run(sch, a);
      },
      [](kind_definition::PyCall& py) { py.Positional(py.in[0]); });
}

}  // namespace

const InstructionKind& GetBlock() {
  static const InstructionKind k = kind_definition::DefineKind(
      "GetBlock", {/*is_pure=*/true, /*has_decision=*/false},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(0);
        a.ExpectAttrs(2);
        return {sch.GetBlock(a.AttrStr(0), a.AttrStr(1)).ref()};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("name", py.attrs[0].dump()).Arg("func_name", py.attrs[1].dump());
      });
  return k;
}

const InstructionKind& GetLoops() {
  static const InstructionKind k =
      BlockQuery("GetLoops", [](Schedule& sch, const kind_definition::Args& a) {
        std::vector<RVRef> out;
        for (LoopRV l : sch.GetLoops(a.Block(0))) out.push_back(l.ref());
        return out;
      });
  return k;
}

const InstructionKind& GetChildBlocks() {
  static const InstructionKind k =
      BlockQuery("GetChildBlocks", [](Schedule& sch, const kind_definition::Args& a) {
        return Refs(sch.GetChildBlocks(a.BlockOrLoopArg(0)));
      });
  return k;
}

const InstructionKind& GetProducers() {
  static const InstructionKind k =
      BlockQuery("GetProducers", [](Schedule& sch, const kind_definition::Args& a) {
        return Refs(sch.GetProducers(a.Block(0)));
      });
  return k;
}

const InstructionKind& GetConsumers() {
  static const InstructionKind k =
      BlockQuery("GetConsumers", [](Schedule& sch, const kind_definition::Args& a) {
        return Refs(sch.GetConsumers(a.Block(0)));
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
