// kind_definition::DefineKind (ir/schedule/define_kind.h): the name given once becomes
// the kind's name, the Python method and the prefix of every error.
#include "ir/schedule/define_kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/trace.h"
#include "ir/workloads/suite.h"

namespace kiln::ir {
namespace {

TEST(DefineKind, PythonMethodIsTheNameInSnakeCase) {
  EXPECT_EQ(kind_definition::PythonMethod("CacheRead"), "cache_read");
  EXPECT_EQ(kind_definition::PythonMethod("ReverseComputeAt"), "reverse_compute_at");
  EXPECT_EQ(kind_definition::PythonMethod("SamplePerfectTile"), "sample_perfect_tile");
  EXPECT_EQ(kind_definition::PythonMethod("RFactor"), "rfactor");
  EXPECT_EQ(kind_definition::PythonMethod("Split"), "split");
}

TEST(DefineKind, TheNameIsTheKindsAndEveryErrorsPrefix) {
  const InstructionKind k = kind_definition::DefineKind(
      "FooBar", {/*is_pure=*/true, /*has_decision=*/false},
      [](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(1);
        return {sch.GetLoops(a.Block(0)).front().ref()};
      },
      [](kind_definition::PyCall& py) { py.Positional(py.in[0]).Arg("n", py.attrs[0].dump()); });
  EXPECT_EQ(k.name, "FooBar");
  EXPECT_TRUE(k.is_pure);
  EXPECT_FALSE(k.has_decision);
  EXPECT_FALSE(static_cast<bool>(k.check));
  EXPECT_EQ(k.as_python({"b0"}, {"l1", "l2"}, nlohmann::json::array({3}), nullptr),
            "l1, l2 = sch.foo_bar(b0, n=3)");
  EXPECT_EQ(k.as_python({"b0"}, {}, nlohmann::json::array({3}), nullptr), "sch.foo_bar(b0, n=3)");

  Schedule sch(Matmul(4, 4, 4));
  try {
    k.apply(sch, {}, nlohmann::json::array(), nullptr);
    FAIL() << "no error for a missing input";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "FooBar: expected 1 input(s), got 0");
  }
  try {
    k.apply(sch, {InstArg::Int(7)}, nlohmann::json::array(), nullptr);
    FAIL() << "no error for an integer where a block belongs";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "FooBar: input 0 must be a block handle");
  }
}

// Every registered kind can replay and render; kinds declared through
// DefineKind render the lines they rendered before it.
TEST(DefineKind, RegisteredKindsRenderTheirLinesAsBefore) {
  std::set<std::string> names;
  for (const InstructionKind* k : AllInstructionKinds()) {
    ASSERT_TRUE(static_cast<bool>(k->apply)) << k->name;
    ASSERT_TRUE(static_cast<bool>(k->as_python)) << k->name;
    names.insert(k->name);
  }
  EXPECT_EQ(names.size(), AllInstructionKinds().size());
  // A few lines as they were written before DefineKind (trace_test.cc holds
  // the round trips of every kind).
  EXPECT_EQ(instruction_kinds::Split().as_python({"l0", "v1", "None"}, {"l2", "l3"},
                                                 nlohmann::json::array({1, 0}), nullptr),
            "l2, l3 = sch.split(loop=l0, factors=[v1, None], preserve_unit_iters=True, "
            "disable_predication=False)");
  EXPECT_EQ(instruction_kinds::Fuse().as_python({"l0", "l1"}, {"l2"}, nlohmann::json::array({0}),
                                                nullptr),
            "l2 = sch.fuse(l0, l1, preserve_unit_iters=False)");
  EXPECT_EQ(
      instruction_kinds::Reorder().as_python({"l0", "l1"}, {}, nlohmann::json::array(), nullptr),
      "sch.reorder(l0, l1)");
  EXPECT_EQ(instruction_kinds::EnterPostproc().as_python({}, {}, nlohmann::json::array(), nullptr),
            "sch.enter_postproc()");
  EXPECT_EQ(instruction_kinds::CacheWrite().as_python({"b0", "[]"}, {"b1"},
                                                      nlohmann::json::array({0, "local"}), nullptr),
            "b1 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")");
  EXPECT_EQ(
      instruction_kinds::RFactor().as_python({"l0"}, {"b1"}, nlohmann::json::array({1}), nullptr),
      "b1 = sch.rfactor(loop=l0, factor_axis=1)");
}

}  // namespace
}  // namespace kiln::ir
