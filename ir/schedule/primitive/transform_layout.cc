// transform_layout: give a buffer a new layout through an index map, so that
// every access A[idx] becomes A[map(idx)] on a buffer of the mapped shape.
//
// Only bijections of the buffer's index box are accepted: a map that needs
// padding (or merges elements) would change what the program computes, and
// Kiln does not implement TVM's pad_value. For a function parameter the
// signature changes, as in TVM: callers must pass the data in the new layout.
#include <nlohmann/json.hpp>

#include "ir/arith/int_set.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrim = "transform_layout";

std::string ShapeText(const Buffer& b) {
  std::string s = "(";
  for (size_t k = 0; k < b.ndim(); ++k) s += (k ? ", " : "") + ToText(b.shape()[k]);
  return s + (b.ndim() == 1 ? ",)" : ")");
}

class LayoutRewriter : public IRMutator {
 public:
  LayoutRewriter(Buffer old_buffer, Buffer new_buffer, const IndexMap& map)
      : old_(std::move(old_buffer)), new_(std::move(new_buffer)), map_(map) {}

 protected:
  Buffer VisitBuffer(const Buffer& b) override { return b.same_as(old_) ? new_ : b; }

  // The base class would rebuild the access on the new buffer with the old
  // indices, which does not type-check; remap them here instead.
  Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op) override {
    if (!op->buffer.same_as(old_)) return IRMutator::VisitBufferLoad(e, op);
    return BufferLoad(new_, MapIndices(VisitAll(op->indices)));
  }

  Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op) override {
    if (!op->buffer.same_as(old_)) return IRMutator::VisitBufferStore(s, op);
    return BufferStore(new_, VisitExpr(op->value), MapIndices(VisitAll(op->indices)));
  }

  Block VisitBlock(const Block& b) override {
    Block visited = IRMutator::VisitBlock(b);
    BlockNode n = *visited.get();
    bool changed = false;
    for (auto* regions : {&n.reads, &n.writes}) {
      for (BufferRegion& r : *regions) {
        if (!r.buffer.same_as(new_)) continue;
        r = MapRegion(r);
        changed = true;
      }
    }
    return changed ? MakeBlock(std::move(n)) : visited;
  }

 private:
  std::vector<Expr> VisitAll(const std::vector<Expr>& v) {
    std::vector<Expr> out;
    for (const Expr& e : v) out.push_back(VisitExpr(e));
    return out;
  }

  std::vector<Expr> MapIndices(const std::vector<Expr>& indices) {
    for (const Expr& i : indices) {
      if (!i.dtype().is_scalar()) {
        throw ScheduleError(kPrim, "buffer " + old_.name() + " is accessed with the vector index " +
                                       ToText(i) + "; only scalar accesses can be remapped");
      }
    }
    arith::Analyzer an;
    return map_.Apply(indices, &an);
  }

  // The box covering the image of an old-layout region.
  BufferRegion MapRegion(const BufferRegion& r) {
    arith::Analyzer an;
    arith::IntSetMap dom;
    for (size_t k = 0; k < r.region.size(); ++k) {
      dom[map_.initial_indices[k].get()] = arith::IntervalSet::FromRange(r.region[k], &an);
    }
    BufferRegion out{new_, {}};
    for (size_t j = 0; j < map_.final_indices.size(); ++j) {
      arith::IntervalSet s = arith::EvalSet(map_.final_indices[j], dom, &an);
      if (!s.is_bounded()) {
        out.region.push_back(Range{IntImm(0, new_.shape()[j].dtype()), new_.shape()[j]});
        continue;
      }
      out.region.push_back(Range{s.min, an.Simplify(s.max - s.min + 1)});
    }
    return out;
  }

  Buffer old_, new_;
  const IndexMap& map_;
};

}  // namespace

void Schedule::TransformLayout(BlockRV block_rv, int buffer_index,
                               const std::string& buffer_index_type, const IndexMap& index_map,
                               const std::optional<IndexMap>& pad_value,
                               bool assume_injective_transform) {
  const BlockNode& block = Get(block_rv);
  if (buffer_index_type != "read" && buffer_index_type != "write") {
    throw ScheduleError(kPrim, "buffer_index_type must be \"read\" or \"write\", got \"" +
                                   buffer_index_type + "\"");
  }
  const auto& regions = buffer_index_type == "read" ? block.reads : block.writes;
  if (buffer_index < 0 || buffer_index >= static_cast<int>(regions.size())) {
    throw ScheduleError(kPrim, "block " + block.name + " has " + std::to_string(regions.size()) +
                                   " " + buffer_index_type + " buffers; " + buffer_index_type +
                                   " index " + std::to_string(buffer_index) + " is out of range");
  }
  Buffer old_buffer = regions[buffer_index].buffer;
  if (pad_value) {
    throw ScheduleError(kPrim,
                        "pad_value is not supported: only maps that are bijections of the "
                        "indices of buffer " +
                            old_buffer.name() + " can be applied");
  }
  if (index_map.initial_indices.size() != old_buffer.ndim()) {
    throw ScheduleError(kPrim, "the index map " + index_map.ToText() + " takes " +
                                   std::to_string(index_map.initial_indices.size()) +
                                   " indices, but buffer " + old_buffer.name() + " has " +
                                   std::to_string(old_buffer.ndim()) + " dimensions");
  }
  if (!old_buffer->strides.empty()) {
    throw ScheduleError(kPrim, "buffer " + old_buffer.name() +
                                   " has explicit strides; only compact buffers can be remapped");
  }
  arith::Analyzer an;
  // A bijection is injective too, so assume_injective_transform (which in
  // TVM skips the padding analysis) changes nothing here: the check stays.
  std::string why = index_map.NotBijectiveReason(old_buffer.shape(), &an);
  if (!why.empty()) {
    throw ScheduleError(kPrim, "the index map " + index_map.ToText() +
                                   " cannot be applied to buffer " + old_buffer.name() +
                                   " of shape " + ShapeText(old_buffer) + ": " + why);
  }
  BufferNode n = *old_buffer.get();
  n.shape = index_map.MapShape(old_buffer.shape(), &an);
  Buffer new_buffer(MakeNode<BufferNode>(std::move(n)));

  LayoutRewriter rewriter(old_buffer, new_buffer, index_map);
  PrimFunc f = func();
  f.body = rewriter.VisitStmt(f.body);
  for (Buffer& p : f.params) {
    if (p.same_as(old_buffer)) p = new_buffer;
  }
  SetFunc(std::move(f));

  nlohmann::json attrs = nlohmann::json::array({buffer_index, buffer_index_type == "read" ? 0 : 1,
                                                nullptr, assume_injective_transform ? 1 : 0});
  Record(instruction_kinds::TransformLayout().name,
         {InstArg::Of(block_rv.ref()), InstArg::Str(index_map.ToText())}, std::move(attrs), {});
}

namespace instruction_kinds {

const InstructionKind& TransformLayout() {
  static const InstructionKind k = kind_definition::DefineKind(
      "TransformLayout", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(2);
        a.ExpectAttrs(4);
        BlockRV block = a.Block(0);
        IndexMap map;
        try {
          map = IndexMap::FromText(a.Str(1));
        } catch (const ParseError& e) {
          a.Fail(std::string("the index map does not parse: ") + e.what());
        }
        int64_t type = a.AttrInt(1);
        if (type != 0 && type != 1) {
          a.Fail("buffer_index_type must be 0 (read) or 1 (write), got " + std::to_string(type));
        }
        std::optional<IndexMap> pad;
        if (!a.attrs()[2].is_null()) {
          try {
            pad = IndexMap::FromText(a.AttrStr(2));
          } catch (const ParseError& e) {
            a.Fail(std::string("the pad value does not parse: ") + e.what());
          }
        }
        sch.TransformLayout(block, static_cast<int>(a.AttrInt(0)), type == 0 ? "read" : "write",
                            map, pad, a.AttrBool(3));
        return {};
      },
      [](kind_definition::PyCall& py) {
        const nlohmann::json& attrs = py.attrs;
        // The map input arrives as a quoted string; python takes the lambda.
        std::string map = py.in[1];
        if (!map.empty() && map.front() == '"') map = nlohmann::json::parse(map).get<std::string>();
        std::string pad = attrs[2].is_string() ? attrs[2].get<std::string>() : "None";
        bool injective =
            attrs[3].is_boolean() ? attrs[3].get<bool>() : attrs[3].get<int64_t>() != 0;
        py.Arg("block", py.in[0]);
        py.Arg("buffer", std::string("(\"") + (attrs[1].get<int64_t>() == 0 ? "read" : "write") +
                             "\", " + attrs[0].dump() + ")");
        py.Arg("index_map", map).Arg("pad_value", pad);
        py.Arg("assume_injective_transform", kind_definition::PyBool(injective));
      },
      [](const std::vector<InstArg>& in, const nlohmann::json& attrs) -> std::string {
        if (in.size() != 2) return "expects 2 inputs (block, index_map)";
        if (in[1].kind != InstArg::Kind::kString)
          return "input 1 must be the index map as a string";
        if (!attrs.is_array() || attrs.size() != 4) {
          return "expects 4 attrs (buffer_index, buffer_index_type, pad_value, "
                 "assume_injective_transform)";
        }
        if (!attrs[0].is_number_integer() || !attrs[1].is_number_integer()) {
          return "buffer_index and buffer_index_type must be integers";
        }
        if (!attrs[2].is_null() && !attrs[2].is_string())
          return "pad_value must be null or a string";
        if (!attrs[3].is_number_integer() && !attrs[3].is_boolean()) {
          return "assume_injective_transform must be 0/1";
        }
        return "";
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
