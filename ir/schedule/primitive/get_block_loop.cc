// get_block, get_loops, get_child_blocks, get_producers, get_consumers: the
// pure lookups every schedule program starts with.
#include <algorithm>

#include "ir/schedule/inst_args.h"
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
  Record("GetBlock", {}, nlohmann::json::array({name, func_name}), {out.ref()});
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
  Record("GetLoops", {InstArg::Of(block.ref())}, nlohmann::json::array(), refs);
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
  Record("GetChildBlocks", {Arg(scope)}, nlohmann::json::array(), refs);
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
  Record("GetProducers", {InstArg::Of(block.ref())}, nlohmann::json::array(), refs);
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
  Record("GetConsumers", {InstArg::Of(block.ref())}, nlohmann::json::array(), refs);
  return out;
}

namespace kinds {

namespace {

std::vector<RVRef> Refs(const std::vector<BlockRV>& v) {
  std::vector<RVRef> out;
  for (const auto& b : v) out.push_back(b.ref());
  return out;
}

// A pure kind taking one block (or block/loop) input and returning blocks or loops.
InstructionKind BlockQuery(std::string name, std::string method,
                           std::vector<RVRef> (*run)(Schedule&, const std::vector<InstArg>&)) {
  return InstructionKind{
      name, /*is_pure=*/true, /*has_decision=*/false,
      [name, run](Schedule& sch, const std::vector<InstArg>& in, const nlohmann::json& attrs,
                  const nlohmann::json*) {
        inst::ExpectInputs(name, in, 1);
        inst::ExpectAttrs(name, attrs, 0);
        return run(sch, in);
      },
      [method](const std::vector<std::string>& in, const std::vector<std::string>& out,
               const nlohmann::json&, const nlohmann::json*) {
        return inst::PyAssign(out) + "sch." + method + "(" + in[0] + ")";
      },
      nullptr};
}

}  // namespace

const InstructionKind& GetBlock() {
  static const InstructionKind k{
      "GetBlock", /*is_pure=*/true, /*has_decision=*/false,
      [](Schedule& sch, const std::vector<InstArg>& in, const nlohmann::json& attrs,
         const nlohmann::json*) -> std::vector<RVRef> {
        inst::ExpectInputs("GetBlock", in, 0);
        inst::ExpectAttrs("GetBlock", attrs, 2);
        return {sch.GetBlock(inst::AttrStr("GetBlock", attrs, 0), inst::AttrStr("GetBlock", attrs, 1))
                    .ref()};
      },
      [](const std::vector<std::string>&, const std::vector<std::string>& out,
         const nlohmann::json& attrs, const nlohmann::json*) {
        return inst::PyAssign(out) + "sch.get_block(name=" + attrs[0].dump() +
               ", func_name=" + attrs[1].dump() + ")";
      },
      nullptr};
  return k;
}

const InstructionKind& GetLoops() {
  static const InstructionKind k = BlockQuery(
      "GetLoops", "get_loops", [](Schedule& sch, const std::vector<InstArg>& in) {
        std::vector<RVRef> out;
        for (LoopRV l : sch.GetLoops(inst::Block("GetLoops", in, 0))) out.push_back(l.ref());
        return out;
      });
  return k;
}

const InstructionKind& GetChildBlocks() {
  static const InstructionKind k = BlockQuery(
      "GetChildBlocks", "get_child_blocks", [](Schedule& sch, const std::vector<InstArg>& in) {
        return Refs(sch.GetChildBlocks(inst::BlockOrLoopArg("GetChildBlocks", in, 0)));
      });
  return k;
}

const InstructionKind& GetProducers() {
  static const InstructionKind k = BlockQuery(
      "GetProducers", "get_producers", [](Schedule& sch, const std::vector<InstArg>& in) {
        return Refs(sch.GetProducers(inst::Block("GetProducers", in, 0)));
      });
  return k;
}

const InstructionKind& GetConsumers() {
  static const InstructionKind k = BlockQuery(
      "GetConsumers", "get_consumers", [](Schedule& sch, const std::vector<InstArg>& in) {
        return Refs(sch.GetConsumers(inst::Block("GetConsumers", in, 0)));
      });
  return k;
}

}  // namespace kinds
}  // namespace kiln::ir
