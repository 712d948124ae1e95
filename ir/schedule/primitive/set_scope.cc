// set_scope: move a buffer the function allocates to another storage scope
// ("shared", "local", ...). Every use of the buffer (loads, stores, regions,
// its alloc_buffers entry) is switched to one new Buffer with that scope.
//
// As in TVM, setting the scope the buffer already has changes nothing (and
// is still recorded); otherwise the scope must be one TVM knows and the
// buffer must be allocated by a block, not a function parameter.
#include <cctype>
#include <limits>
#include <string>

#include "ir/functor.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/alloc_site.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

// TVM's StorageScope ranks, optionally followed by a ".tag" ("shared.dyn",
// "global.texture", "local.fragment").
bool IsStorageScope(const std::string& s) {
  static const char* kRanks[] = {"global",
                                 "shared",
                                 "warp",
                                 "local",
                                 "wmma.matrix_a",
                                 "wmma.matrix_b",
                                 "wmma.accumulator",
                                 "m16n8k8.matrixA",
                                 "m16n8k8.matrixB",
                                 "m16n8k8.matrixC",
                                 "metal.simdgroup",
                                 "texture"};
  for (const char* rank : kRanks) {
    std::string r = rank;
    if (s.compare(0, r.size(), r) != 0) continue;
    std::string tag = s.substr(r.size());
    if (tag.empty()) return true;
    if (tag.size() < 2 || tag[0] != '.') continue;
    bool ok = true;
    for (size_t i = 1; i < tag.size(); ++i) {
      char c = tag[i];
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
    }
    if (ok) return true;
  }
  return false;
}

class BufferReplacer : public IRMutator {
 public:
  BufferReplacer(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}

 protected:
  Buffer VisitBuffer(const Buffer& b) override { return b.same_as(from_) ? to_ : b; }

 private:
  Buffer from_, to_;
};

}  // namespace

void Schedule::SetScope(BlockRV block, int buffer_index, const std::string& storage_scope) {
  StmtPath path = PathOf(block);
  const BlockNode* b = path.back().as<BlockRealizeNode>()->block.get();
  if (buffer_index < 0 || buffer_index >= static_cast<int>(b->writes.size())) {
    throw ScheduleError("set_scope", "buffer_index " + std::to_string(buffer_index) +
                                         " is out of range: block '" + b->name + "' writes " +
                                         std::to_string(b->writes.size()) + " buffer(s)");
  }
  Buffer buffer = b->writes[buffer_index].buffer;
  if (buffer.scope() != storage_scope) {
    if (!IsStorageScope(storage_scope)) {
      throw ScheduleError("set_scope", "unknown storage scope \"" + storage_scope +
                                           "\" for buffer " + buffer.name() +
                                           " (expected global, shared, shared.dyn, local, warp, "
                                           "wmma.matrix_a, wmma.matrix_b, wmma.accumulator, ...)");
    }
    // The allocation site is the block itself or one enclosing it.
    if (!AllocatedOnPath(path, buffer)) {
      throw ScheduleError("set_scope",
                          "buffer " + buffer.name() + " written by block '" + b->name +
                              "' is not allocated by a block (it is a function "
                              "parameter); only intermediate buffers can change scope");
    }
    BufferReplacer replacer(buffer, buffer.WithScope(storage_scope));
    SetBody(replacer.VisitStmt(func().body));
  }
  Record(instruction_kinds::SetScope().name, {InstArg::Of(block.ref())},
         nlohmann::json::array({buffer_index, storage_scope}), {});
}

namespace instruction_kinds {

const InstructionKind& SetScope() {
  static const InstructionKind k = kind_definition::DefineKind(
      "SetScope", {},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        a.ExpectAttrs(2);
        int64_t index = a.AttrInt(0);
        if (index < std::numeric_limits<int>::min() || index > std::numeric_limits<int>::max()) {
          a.Fail("buffer_index " + std::to_string(index) + " is out of range");
        }
        sch.SetScope(a.Block(0), static_cast<int>(index), a.AttrStr(1));
        return {};
      },
      [](kind_definition::PyCall& py) {
        py.Arg("block", py.in[0]).Arg("buffer_index", py.attrs[0].dump());
        py.Arg("storage_scope", py.attrs[1].dump());
      });
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
