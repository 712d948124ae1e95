// storage_align: ask lowering to pad a buffer's stride so that
// stride[axis] % factor == offset (avoiding shared-memory bank conflicts).
//
// Nothing is rewritten now: as in TVM, the request is recorded on the block
// that writes the buffer, under the block annotation "buffer_dim_align", as a
// list of (buffer_index, axis, factor, offset) tuples, buffer_index counting
// into the block's writes and axis normalized to be non-negative. A second
// request for the same (buffer_index, axis) replaces the first.
//
// Annotation values are scalars in this IR, so the list is kept as its
// JSON text, e.g. "[[0, 0, 32, 8]]" (TVM holds the same list as an array).
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/alloc_site.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

constexpr const char* kBufferDimAlign = "buffer_dim_align";

using AlignTuple = std::vector<int64_t>;

// Reads the block's existing buffer_dim_align list; throws if it is not a
// list of 4-integer lists.
std::vector<AlignTuple> ReadAlign(const BlockNode& b) {
  auto it = b.annotations.find(kBufferDimAlign);
  if (it == b.annotations.end()) return {};
  auto fail = [&]() -> std::vector<AlignTuple> {
    throw ScheduleError("storage_align",
                        "block '" + b.name +
                            "' has a \"buffer_dim_align\" annotation that is not "
                            "a list of (buffer_index, axis, factor, offset) tuples");
  };
  const auto* s = it->second.as<StringImmNode>();
  if (!s) return fail();
  nlohmann::json j = nlohmann::json::parse(s->value, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return fail();
  std::vector<AlignTuple> out;
  for (const auto& t : j) {
    if (!t.is_array() || t.size() != 4) return fail();
    AlignTuple tuple;
    for (const auto& x : t) {
      if (!x.is_number_integer()) return fail();
      tuple.push_back(x.get<int64_t>());
    }
    out.push_back(tuple);
  }
  return out;
}

std::string AlignText(const std::vector<AlignTuple>& tuples) {
  std::string s = "[";
  for (size_t i = 0; i < tuples.size(); ++i) {
    s += i ? ", [" : "[";
    for (size_t k = 0; k < tuples[i].size(); ++k)
      s += (k ? ", " : "") + std::to_string(tuples[i][k]);
    s += "]";
  }
  return s + "]";
}

}  // namespace

void Schedule::StorageAlign(BlockRV block, int buffer_index, int axis, int factor, int offset) {
  StmtPath path = PathOf(block);
  const BlockNode* b = path.back().as<BlockRealizeNode>()->block.get();
  if (buffer_index < 0 || buffer_index >= static_cast<int>(b->writes.size())) {
    throw ScheduleError("storage_align", "buffer_index " + std::to_string(buffer_index) +
                                             " is out of range: block '" + b->name + "' writes " +
                                             std::to_string(b->writes.size()) + " buffer(s)");
  }
  const Buffer& buffer = b->writes[buffer_index].buffer;
  if (factor <= 0) {
    throw ScheduleError("storage_align", "factor must be positive, got " + std::to_string(factor) +
                                             " (buffer " + buffer.name() + ")");
  }
  int ndim = static_cast<int>(buffer.ndim());
  if (axis < -ndim || axis >= ndim) {
    throw ScheduleError("storage_align", "axis " + std::to_string(axis) +
                                             " is out of range for buffer " + buffer.name() +
                                             ", which has " + std::to_string(ndim) +
                                             " dimension(s) (expected [" + std::to_string(-ndim) +
                                             ", " + std::to_string(ndim) + "))");
  }
  const int given_axis = axis;
  if (axis < 0) axis += ndim;
  if (!AllocatedOnPath(path, buffer)) {
    throw ScheduleError("storage_align", "buffer " + buffer.name() + " written by block '" +
                                             b->name +
                                             "' is not allocated by a block (it is a "
                                             "function parameter); its layout is fixed");
  }
  std::vector<AlignTuple> tuples = ReadAlign(*b);
  AlignTuple mine = {buffer_index, axis, factor, offset};
  bool replaced = false;
  for (auto& t : tuples) {
    if (t[0] == buffer_index && t[1] == axis) {
      t = mine;
      replaced = true;
      break;
    }
  }
  if (!replaced) tuples.push_back(mine);
  BlockNode n = *b;
  n.annotations[kBufferDimAlign] = StringImm(AlignText(tuples));
  SetBody(ReplaceBlockAlongPath(path, MakeBlock(std::move(n))));
  Record(instruction_kinds::StorageAlign().name, {InstArg::Of(block.ref())},
         nlohmann::json::array({buffer_index, given_axis, factor, offset}), {});
}

namespace instruction_kinds {

const InstructionKind& StorageAlign() {
  static const InstructionKind k = kind_definition::DefineKind(
      "StorageAlign", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(4);
        int v[4];
        for (size_t i = 0; i < 4; ++i) {
          int64_t x = a.AttrInt(i);
          if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
            a.Fail("attribute " + std::to_string(i) + " is out of range");
          }
          v[i] = static_cast<int>(x);
        }
        sch.StorageAlign(a.Block(0), v[0], v[1], v[2], v[3]);
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block", py.in[0]).Arg("buffer_index", py.attrs[0].dump());
        py.Arg("axis", py.attrs[1].dump()).Arg("factor", py.attrs[2].dump());
        py.Arg("offset", py.attrs[3].dump());
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
