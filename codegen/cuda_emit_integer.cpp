// The expressions of the arithmetic elementwise ops on i32 and i64 operands: add, sub, mul
// (with a tensor or an integral `scalar`), minimum, maximum, neg, abs, sign and clamp.
//
// Operands are gxc_i64 (the compute type of both integer dtypes) and so is each expression.
// The semantics are the reference's (runtime/reference/reference_elementwise.cpp), which
// follows torch: two's complement wraparound, computed through gxc_u64 because signed
// overflow is undefined in C++ and CUDA C++; an i32 result is wrapped to 32 bits at once, so
// that a later member of a fused kernel reads what a store would keep. Never through float:
// i64 values beyond 2^53 stay exact.
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

std::string modular(const std::string& a, const char* symbol, const std::string& b) {
  return fmt::format("(gxc_i64)((gxc_u64){} {} (gxc_u64){})", a, symbol, b);
}

std::string unwrapped(const Op& op, const std::vector<std::string>& operands) {
  const std::string& a = operands.at(0);
  // Shape inference checked the scalar and the bounds integral and within the dtype's range.
  auto number = [&](const char* name) { return intLiteral(op.attrs.getInt(name, 0)); };
  std::string b = operands.size() == 2 ? operands[1] : number("scalar");
  switch (op.kind) {
    case OpKind::Add:
      return modular(a, "+", b);
    case OpKind::Sub:
      return modular(a, "-", b);
    case OpKind::Mul:
      return modular(a, "*", b);
    case OpKind::Minimum:
      return fmt::format("({0} < {1} ? {0} : {1})", a, b);
    case OpKind::Maximum:
      return fmt::format("({0} > {1} ? {0} : {1})", a, b);
    case OpKind::Neg:  // the minimum stays itself, as torch
      return modular("0", "-", a);
    case OpKind::Abs:
      return fmt::format("({0} < 0 ? {1} : {0})", a, modular("0", "-", a));
    case OpKind::Sign:
      return fmt::format("(gxc_i64)(({0} > 0) - ({0} < 0))", a);
    case OpKind::Clamp: {  // min, then max, as torch.clamp
      std::string v = a;
      if (op.attrs.has("min")) v = fmt::format("({0} < {1} ? {1} : {0})", v, number("min"));
      if (op.attrs.has("max")) v = fmt::format("({0} > {1} ? {1} : {0})", v, number("max"));
      return v;
    }
    default:
      GXC_CHECK(false, "layer '{}': {} of integers", op.layerName(), opName(op.kind));
  }
  return "";
}

}  // namespace

std::string integerExpr(const Op& op, const std::vector<std::string>& operands) {
  std::string value = unwrapped(op, operands);
  if (op.result->type.dtype == DType::I32) return fmt::format("((gxc_i64)(int){})", value);
  return value;
}

}  // namespace gxc::cuda
