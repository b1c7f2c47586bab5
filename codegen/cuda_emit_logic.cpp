// The expressions of the elementwise ops of any dtype (ir/op_kinds.h isElementwiseAnyDType):
// the comparisons, logical_and, logical_or, logical_not, where, masked_fill and cast.
//
// Each operand expression is in the compute type of its dtype (cuda_emit.h computeType), and
// each expression is in the compute type of the op's result. The semantics are the reference
// interpreter's (runtime/reference/reference_logic.cpp), which follows torch:
//   - a comparison with `scalar` compares in the tensor's dtype: a float tensor with the
//     number rounded to that dtype, an integer or bool tensor with an integral number exactly,
//     and with a fractional one in double;
//   - nonzero is true (NaN too) wherever a number is read as a truth value;
//   - cast truncates floats toward zero into integers (what torch gives for NaN, infinities
//     and values out of the integer's range differs by machine; so does gxc's), and rounds
//     into f16 and bf16 through the f32 value, as torch's casts from f64 do.
#include <cmath>

#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

bool isIntegral(DType dtype) { return isInteger(dtype) || dtype == DType::Bool; }

// `value` in the compute type of `dtype`, converted as a store into `dtype` would convert it.
std::string numberIn(DType dtype, double value) {
  if (dtype == DType::F64) return doubleLiteral(value);
  if (dtype == DType::Bool) return value != 0 ? "true" : "false";
  if (isInteger(dtype)) return intLiteral(static_cast<int64_t>(value));
  std::string literal = floatLiteral(static_cast<float>(value));
  if (dtype == DType::F16) return fmt::format("gxc_round_f16({})", literal);
  if (dtype == DType::BF16) return fmt::format("gxc_round_bf16({})", literal);
  return literal;
}

const char* comparisonSymbol(OpKind kind) {
  switch (kind) {
    case OpKind::Eq:
      return "==";
    case OpKind::Ne:
      return "!=";
    case OpKind::Lt:
      return "<";
    case OpKind::Le:
      return "<=";
    case OpKind::Gt:
      return ">";
    default:
      return ">=";
  }
}

std::string comparison(const Op& op, const std::vector<std::string>& operands) {
  const char* symbol = comparisonSymbol(op.kind);
  if (operands.size() == 2) return fmt::format("({} {} {})", operands[0], symbol, operands[1]);
  DType dtype = op.operands[0]->type.dtype;
  double scalar = op.attrs.getFloat("scalar", 0.0);
  bool integralScalar = std::trunc(scalar) == scalar && std::fabs(scalar) < 9.2e18;
  if (isIntegral(dtype) && !integralScalar)
    return fmt::format("((double){} {} {})", operands[0], symbol, doubleLiteral(scalar));
  if (isIntegral(dtype))
    return fmt::format("((gxc_i64){} {} {})", operands[0], symbol,
                       intLiteral(static_cast<int64_t>(scalar)));
  return fmt::format("({} {} {})", operands[0], symbol, numberIn(dtype, scalar));
}

// `value` (of `from`'s compute type) as `to` holds it: rounded to f16 or bf16, wrapped to 32
// bits for i32, so that a later member of a fused kernel reads what a store would keep.
std::string converted(const std::string& value, DType from, DType to) {
  switch (to) {
    case DType::Bool:
      return fmt::format("({} != 0)", value);
    case DType::F16:
      return fmt::format("gxc_round_f16((float){})", value);
    case DType::BF16:
      return fmt::format("gxc_round_bf16((float){})", value);
    case DType::I32:
      return fmt::format("((gxc_i64)(int){})", value);
    default:
      if (computeType(from) == computeType(to)) return value;
      return fmt::format("(({}){})", computeType(to), value);
  }
}

}  // namespace

std::string anyDTypeExpr(const Op& op, const std::vector<std::string>& operands) {
  if (isComparison(op.kind)) return comparison(op, operands);
  const std::string& a = operands.at(0);
  switch (op.kind) {
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr: {
      std::string b = operands.size() == 2
                          ? fmt::format("({} != 0)", operands[1])
                          : std::string(op.attrs.getFloat("scalar", 0.0) != 0 ? "true" : "false");
      return fmt::format("(({} != 0) {} {})", a, op.kind == OpKind::LogicalAnd ? "&&" : "||", b);
    }
    case OpKind::LogicalNot:
      return fmt::format("({} == 0)", a);
    case OpKind::Where:
      return fmt::format("({} ? {} : {})", a, operands.at(1), operands.at(2));
    case OpKind::MaskedFill:
      return fmt::format("({} ? {} : {})", operands.at(1),
                         numberIn(op.result->type.dtype, op.attrs.getFloat("value", 0.0)), a);
    case OpKind::Cast:
      return converted(a, op.operands[0]->type.dtype, op.result->type.dtype);
    default:
      GXC_CHECK(false, "layer '{}': {} is not an elementwise op of any dtype", op.layerName(),
                opName(op.kind));
  }
  return "";
}

}  // namespace gxc::cuda
