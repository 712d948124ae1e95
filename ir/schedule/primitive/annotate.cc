// annotate and unannotate: attach a key/value hint to a block or a loop (the
// message passing between schedule rules and postprocessors).
//
// As in TVM, annotating a key that is already present keeps the existing
// value (the call is still recorded), and unannotating a missing key is an
// error. A sampled value (ExprRV) is stored as its integer value; the trace
// keeps the variable, so replay with other decisions stores the new value.
#include <limits>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/schedule_mutator.h"

namespace kiln::ir {

namespace {

// An integer annotation is an int32 constant when it fits (as TVM's Integer).
Expr IntAnn(int64_t v) {
  bool fits = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return IntImm(v, fits ? DataType::Int32() : DataType::Int64());
}

std::string TargetWords(const Schedule& sch, const BlockOrLoop& t) {
  if (const auto* b = std::get_if<BlockRV>(&t)) return "block '" + sch.NameOf(*b) + "'";
  return "loop " + sch.NameOf(std::get<LoopRV>(t));
}

// Replaces the annotations of the block or loop `t` names. Annotations are
// no part of any fact the schedule keeps, so the facts stay.
void SetAnnotations(Schedule* sch, const BlockOrLoop& t, Annotations ann) {
  if (const auto* b = std::get_if<BlockRV>(&t)) {
    StmtPath path = sch->PathOf(*b);
    BlockNode n = *path.back().as<BlockRealizeNode>()->block.get();
    n.annotations = std::move(ann);
    ScheduleMutator(*sch).SetBodyKeepingFacts(ReplaceBlockAlongPath(path, MakeBlock(std::move(n))));
    return;
  }
  StmtPath path = sch->PathOf(std::get<LoopRV>(t));
  auto n = MakeNode<ForNode>(*path.back().as<ForNode>());
  n->annotations = std::move(ann);
  ScheduleMutator(*sch).SetBodyKeepingFacts(ReplaceAlongPath(path, Stmt(std::move(n))));
}

const Annotations& AnnotationsOf(const Schedule& sch, const BlockOrLoop& t) {
  if (const auto* b = std::get_if<BlockRV>(&t)) return sch.Get(*b).annotations;
  return sch.Get(std::get<LoopRV>(t)).annotations;
}

}  // namespace

void Schedule::Annotate(BlockOrLoop target, const std::string& key, const AnnValue& value) {
  if (key.empty()) {
    throw ScheduleError("annotate",
                        "the annotation key for " + TargetWords(*this, target) + " is empty");
  }
  Expr stored;
  InstArg recorded;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    stored = IntAnn(*i);
    recorded = InstArg::Int(*i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    stored = FloatImm(*d, DataType::Float32());
    recorded = InstArg::Float(*d);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    stored = StringImm(*s);
    recorded = InstArg::Str(*s);
  } else {
    ExprRV v = std::get<ExprRV>(value);
    stored = IntAnn(Get(v));
    recorded = InstArg::Of(v.ref());
  }
  const Annotations& current = AnnotationsOf(*this, target);
  if (!current.count(key)) {
    Annotations ann = current;
    ann[key] = stored;
    SetAnnotations(this, target, std::move(ann));
  }
  Record(instruction_kinds::Annotate().name, {Arg(target), recorded}, nlohmann::json::array({key}),
         {});
}

void Schedule::Unannotate(BlockOrLoop target, const std::string& key) {
  const Annotations& current = AnnotationsOf(*this, target);
  if (!current.count(key)) {
    std::string keys;
    for (const auto& [k, v] : current) keys += (keys.empty() ? "" : ", ") + k;
    throw ScheduleError("unannotate", TargetWords(*this, target) + " has no annotation \"" + key +
                                          "\" (it has: " + (keys.empty() ? "none" : keys) + ")");
  }
  Annotations ann = current;
  ann.erase(key);
  SetAnnotations(this, target, std::move(ann));
  Record(instruction_kinds::Unannotate().name, {Arg(target)}, nlohmann::json::array({key}), {});
}

namespace instruction_kinds {

const InstructionKind& Annotate() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Annotate", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(2);
        a.ExpectAttrs(1);
        BlockOrLoop target = a.BlockOrLoopArg(0);
        const InstArg& v = a.inputs()[1];
        AnnValue value;
        switch (v.kind) {
          case InstArg::Kind::kInt:
            value = v.int_value;
            break;
          case InstArg::Kind::kFloat:
            value = v.float_value;
            break;
          case InstArg::Kind::kString:
            value = v.str_value;
            break;
          case InstArg::Kind::kRV:
            value = a.Expr(1);
            break;
          default:
            a.Fail("input 1 (the value) must be an integer, float, string or ExprRV");
        }
        sch.Annotate(target, a.AttrStr(0), value);
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block_or_loop", py.in[0])
            .Arg("ann_key", py.attrs[0].dump())
            .Arg("ann_val", py.in[1]);
      },
      [](const std::vector<InstArg>& in, const nlohmann::json& attrs) -> std::string {
        if (in.size() != 2) return "Annotate takes two inputs, the block or loop and the value";
        if (!attrs.is_array() || attrs.size() != 1 || !attrs[0].is_string()) {
          return "Annotate takes one attribute, the annotation key";
        }
        return "";
      });
  return k;
}

const InstructionKind& Unannotate() {
  static const InstructionKind k = kind_definition::DefineKind(
      "Unannotate", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(1);
        sch.Unannotate(a.BlockOrLoopArg(0), a.AttrStr(0));
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block_or_loop", py.in[0]).Arg("ann_key", py.attrs[0].dump());
      },
      [](const std::vector<InstArg>&, const nlohmann::json& attrs) -> std::string {
        if (!attrs.is_array() || attrs.size() != 1 || !attrs[0].is_string()) {
          return "Unannotate takes one attribute, the annotation key";
        }
        return "";
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
