// Constructors for expressions and statements, with type checking.
//
// Arithmetic follows TVM's rules: integer operands of different widths are
// widened to the wider one, int and float mix by casting the int, and a scalar
// meeting a vector is broadcast. Anything else throws IRError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace kiln::ir {

// Constants.
Expr IntImm(int64_t value, DataType t = DataType::Int32());
Expr FloatImm(double value, DataType t = DataType::Float32());
Expr BoolImm(bool value);
Expr StringImm(std::string value);
// A constant of type t holding `value` (int, uint, bool or float type).
Expr MakeConst(DataType t, double value);
// The smallest / largest finite value of t (TVM's min_value / max_value).
Expr MinValue(DataType t);
Expr MaxValue(DataType t);

// If e is an integer / float constant, sets *out and returns true.
bool AsConstInt(const Expr& e, int64_t* out);
bool AsConstFloat(const Expr& e, double* out);
bool IsConstInt(const Expr& e, int64_t value);

// Binary and unary operators (type promotion as described above).
Expr Binary(ExprKind kind, Expr a, Expr b);
Expr Add(Expr a, Expr b);
Expr Sub(Expr a, Expr b);
Expr Mul(Expr a, Expr b);
Expr Div(Expr a, Expr b);
Expr TruncMod(Expr a, Expr b);
Expr FloorDiv(Expr a, Expr b);
Expr FloorMod(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);
Expr EQ(Expr a, Expr b);
Expr NE(Expr a, Expr b);
Expr LT(Expr a, Expr b);
Expr LE(Expr a, Expr b);
Expr GT(Expr a, Expr b);
Expr GE(Expr a, Expr b);
Expr And(Expr a, Expr b);
Expr Or(Expr a, Expr b);
Expr Not(Expr a);
Expr Neg(Expr a);  // 0 - a
Expr Select(Expr cond, Expr t, Expr f);
Expr IfThenElse(Expr cond, Expr t, Expr f);  // the lazy intrinsic
Expr Cast(DataType t, Expr v);
Expr Call(CallOp op, std::vector<Expr> args);  // dtype from the op's args
Expr Ramp(Expr base, Expr stride, int lanes);
Expr Broadcast(Expr value, int lanes);
Expr BufferLoad(Buffer buffer, std::vector<Expr> indices);

// Operator sugar for building IR in C++ (frontend, tests).
inline Expr operator+(Expr a, Expr b) { return Add(std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return Sub(std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return Mul(std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return Div(std::move(a), std::move(b)); }
inline Expr operator-(Expr a) { return Neg(std::move(a)); }
inline Expr operator<(Expr a, Expr b) { return LT(std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return LE(std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return GT(std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return GE(std::move(a), std::move(b)); }
inline Expr operator&&(Expr a, Expr b) { return And(std::move(a), std::move(b)); }
inline Expr operator||(Expr a, Expr b) { return Or(std::move(a), std::move(b)); }
inline Expr operator!(Expr a) { return Not(std::move(a)); }
// Integer literals on either side take the other operand's type.
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator+(int64_t a, Expr b);
Expr operator-(int64_t a, Expr b);
Expr operator*(int64_t a, Expr b);
Expr operator<(Expr a, int64_t b);
Expr operator<=(Expr a, int64_t b);
Expr operator>(Expr a, int64_t b);
Expr operator>=(Expr a, int64_t b);
Expr FloorDiv(Expr a, int64_t b);
Expr FloorMod(Expr a, int64_t b);

// Statements.
Stmt For(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
         std::string thread_tag = "", Annotations annotations = {});
Stmt BufferStore(Buffer buffer, Expr value, std::vector<Expr> indices);
// Flattens nested SeqStmts; a single statement is returned as is.
Stmt SeqStmt(std::vector<Stmt> seq);
Stmt IfThenElseStmt(Expr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt Evaluate(Expr value);
Stmt BlockRealize(std::vector<Expr> iter_values, Expr predicate, Block block);
Block MakeBlock(BlockNode node);

}  // namespace kiln::ir
