// The operand rules of the arithmetic elementwise ops (add, sub, mul, div, pow, minimum,
// maximum and the unary math ops) and of the reductions: float operands, or i32 and i64 ones
// for the ops that torch keeps integer (add, sub, mul, minimum, maximum, neg, abs, sign, clamp;
// sum and prod, whose result is i64 as torch's; max and min). Part of inferResultType.
//
// torch promotes an integer tensor with a float number (a `scalar`, a clamp bound) to f32, and
// computes div of integers as f32 true division; gxc refuses both with a message asking for a
// cast, so an integer op never computes through float. An i32 tensor with a number out of
// i32's range is refused too (torch wraps it to 32 bits; clamp raises).
#include <limits>
#include <variant>

#include "ir/infer_type_rules.h"

namespace gxc::infer {
namespace {

bool keepsIntegersInteger(OpKind kind) {
  switch (kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Minimum:
    case OpKind::Maximum:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Clamp:
      return true;
    default:
      return false;
  }
}

// The number attribute `name` of an op on an integer tensor of `type`: written as an integer
// that the dtype holds.
void requireIntegralNumber(const Op& op, const TensorType& type, const std::string& name) {
  const AttrValue* attr = op.attrs.find(name);
  if (!attr) return;
  if (!std::holds_alternative<int64_t>(*attr))
    fail(op,
         "`{}: {}` is not an integer, and an integer tensor {} with it would be f32 in torch; "
         "cast the tensor to f32 first, or write an integer",
         name, attrValueString(*attr), type.withoutDevice());
  int64_t value = std::get<int64_t>(*attr);
  if (type.dtype == DType::I32 &&
      (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()))
    fail(op, "`{}: {}` does not fit in i32, the dtype of {}", name, value, type.withoutDevice());
}

}  // namespace

void requireArithmeticOperand(const Op& op, const TensorType& type) {
  if (!isInteger(type.dtype) || !keepsIntegersInteger(op.kind)) {
    if (op.kind == OpKind::Div && isInteger(type.dtype))
      fail(op, "div of integers is true division, f32 in torch; cast {} to f32 first",
           type.withoutDevice());
    requireFloat(op, type);
    return;
  }
  requireIntegralNumber(op, type, "scalar");
  requireIntegralNumber(op, type, "min");
  requireIntegralNumber(op, type, "max");
}

void requireReducible(const Op& op, const TensorType& type) {
  bool integerReduction = op.kind == OpKind::Sum || op.kind == OpKind::Prod ||
                          op.kind == OpKind::Max || op.kind == OpKind::Min;
  if (!isInteger(type.dtype) || !integerReduction) requireFloat(op, type);
}

}  // namespace gxc::infer
