// `@I.ir_module`: TVM prints an IRModule as a Python class whose methods are
// its functions (`mod.script()`). Kiln has no module type, so the class is a
// container: each @T.prim_func in it is read as if written at top level, and
// a Relax function or anything else in the class is an error naming it.
#include "ir/text/parser_impl.h"

namespace kiln::ir::text {

void Parser::ParseModule(std::vector<PrimFunc>* out) {
  Expect("@");
  Token deco = Cur();
  ExpectKeyword("I");
  Expect(".");
  Token name = ExpectName("a name after 'I.'");
  if (name.text != "ir_module") {
    Fail(deco, "unsupported decorator '@I." + name.text + "' (only @I.ir_module is supported)");
  }
  if (IsOp("(")) Fail(Cur(), "@I.ir_module takes no arguments here");
  ExpectNewline();
  ExpectKeyword("class");
  ExpectName("a module class name");
  if (Accept("(")) Fail(Cur(), "an @I.ir_module class has no base classes");
  Expect(":");
  ExpectNewline();
  if (!IsKind(TokKind::kIndent)) {
    Fail(Cur(), "expected the indented body of the module class, found " + Describe(Cur()));
  }
  Next();
  while (!IsKind(TokKind::kDedent) && !IsKind(TokKind::kEnd)) {
    if (IsKind(TokKind::kNewline)) {
      Next();
      continue;
    }
    if (!IsOp("@")) {
      Fail(Cur(), "expected '@T.prim_func' in the @I.ir_module class, found " + Describe(Cur()));
    }
    if (!IsName("T", 1)) {
      Token what = At(1);
      std::string spelled = what.text;
      if (IsOp(".", 2)) spelled += "." + At(3).text;
      Fail(what, "unsupported function '@" + spelled +
                     "' in an @I.ir_module (only @T.prim_func functions are supported)");
    }
    out->push_back(ParseFunction());
  }
  if (IsKind(TokKind::kDedent)) Next();
}

}  // namespace kiln::ir::text
