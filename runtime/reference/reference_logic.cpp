// The reference's elementwise ops of any dtype: eq ne lt le gt ge, logical_and logical_or
// logical_not, where, masked_fill and cast, as torch computes them.
//
// Integer and bool elements are read as int64 and float ones as double, so every comparison
// is exact (f32, f16 and bf16 widen to double without rounding). A comparison with `scalar`
// compares in the tensor's dtype, as torch does with a Python number: a float tensor with the
// number rounded to its dtype, an integer or bool tensor with an integral number exactly and
// with a fractional one in double. Nonzero is true, NaN included.
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

bool isIntegral(DType dtype) { return isInteger(dtype) || dtype == DType::Bool; }

bool truthAt(const Tensor& t, int64_t i) {
  return isIntegral(t.dtype()) ? t.loadInt(i) != 0 : t.loadDouble(i) != 0;
}

template <typename T>
bool compare(OpKind kind, T a, T b) {
  switch (kind) {
    case OpKind::Eq:
      return a == b;
    case OpKind::Ne:
      return a != b;
    case OpKind::Lt:
      return a < b;
    case OpKind::Le:
      return a <= b;
    case OpKind::Gt:
      return a > b;
    case OpKind::Ge:
      return a >= b;
    default:
      GXC_CHECK(false, "{} is not a comparison", opName(kind));
  }
  return false;
}

bool compareAt(OpKind kind, const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  if (isIntegral(a.dtype())) return compare(kind, a.loadInt(i), b.loadInt(j));
  return compare(kind, a.loadDouble(i), b.loadDouble(j));
}

// A number as an element of `dtype`: rounded to it (a float dtype), truncated toward zero (an
// integer dtype), nonzero (bool). A one-element tensor of that dtype holds it.
Tensor numberAs(DType dtype, double value) {
  Tensor t(dtype, {});
  t.storeDouble(0, value);
  return t;
}

// Element i of an integer or bool tensor against `scalar`.
bool compareIntegralWithScalar(OpKind kind, int64_t a, double scalar) {
  bool integral = std::trunc(scalar) == scalar && std::fabs(scalar) < 9.2e18;
  if (integral) return compare(kind, a, static_cast<int64_t>(scalar));
  return compare(kind, static_cast<double>(a), scalar);
}

// The result of a two-operand op at every element of the broadcast shape: f(i, j), i and j
// the flat indices of the elements of a and b paired with it.
template <typename F>
Tensor broadcastBinary(const Op& op, const Tensor& a, const Tensor& b, F f) {
  Shape shape = broadcastShapes(op, a.shape(), b.shape());
  Tensor result = makeResult(op, shape);
  for (int64_t k = 0; k < result.numel(); ++k) {
    Coords coords = unravelIndex(k, shape);
    f(result, k, broadcastIndex(coords, a.shape()), broadcastIndex(coords, b.shape()));
  }
  return result;
}

// Float to integer: truncation toward zero; what is out of int64's range (NaN too) becomes
// int64's minimum, as x86's conversion gives (torch leaves it to the machine).
int64_t truncated(double value) {
  if (!(value > -9.2233720368547758e18 && value < 9.2233720368547758e18))
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

void castElement(const Tensor& x, int64_t i, Tensor& result) {
  DType from = x.dtype(), to = result.dtype();
  if (to == DType::Bool) {
    result.storeInt(i, truthAt(x, i));
  } else if (isIntegral(from) && isInteger(to)) {
    result.storeInt(i, x.loadInt(i));  // i64 -> i32 wraps, as torch's
  } else if (isIntegral(from)) {
    int64_t value = x.loadInt(i);
    if (to == DType::F64)
      result.storeDouble(i, static_cast<double>(value));
    else  // one rounding, int64 to f32, then the dtype's own
      result.storeFloat(i, static_cast<float>(value));
  } else if (to == DType::I32) {
    result.storeInt(i, static_cast<int32_t>(truncated(x.loadDouble(i))));
  } else if (isInteger(to)) {
    result.storeInt(i, truncated(x.loadDouble(i)));
  } else {
    result.storeDouble(i, x.loadDouble(i));  // into f16 and bf16 through f32
  }
}

}  // namespace

Tensor compareOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  const Tensor& a = *operands[0];
  if (operands.size() == 2) {
    GXC_CHECK(a.dtype() == operands[1]->dtype(), "layer '{}': {} of two dtypes", op.layerName(),
              opName(op.kind));
    return broadcastBinary(op, a, *operands[1], [&](Tensor& out, int64_t k, int64_t i, int64_t j) {
      out.storeInt(k, compareAt(op.kind, a, i, *operands[1], j));
    });
  }
  GXC_CHECK(op.attrs.has("scalar"), "layer '{}': {} with one operand and no scalar", op.layerName(),
            opName(op.kind));
  double scalar = op.attrs.getFloat("scalar", 0.0);
  Tensor result = makeResult(op, a.shape());
  if (isIntegral(a.dtype())) {
    for (int64_t i = 0; i < a.numel(); ++i)
      result.storeInt(i, compareIntegralWithScalar(op.kind, a.loadInt(i), scalar));
    return result;
  }
  double rounded = numberAs(a.dtype(), scalar).loadDouble(0);
  for (int64_t i = 0; i < a.numel(); ++i)
    result.storeInt(i, compare(op.kind, a.loadDouble(i), rounded));
  return result;
}

Tensor logicalOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  const Tensor& a = *operands[0];
  bool isAnd = op.kind == OpKind::LogicalAnd;
  if (op.kind == OpKind::LogicalNot || operands.size() == 1) {
    bool scalar = op.attrs.getFloat("scalar", 0.0) != 0;
    Tensor result = makeResult(op, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i) {
      bool x = truthAt(a, i);
      result.storeInt(i, op.kind == OpKind::LogicalNot ? !x : isAnd ? x && scalar : x || scalar);
    }
    return result;
  }
  const Tensor& b = *operands[1];
  return broadcastBinary(op, a, b, [&](Tensor& out, int64_t k, int64_t i, int64_t j) {
    bool x = truthAt(a, i), y = truthAt(b, j);
    out.storeInt(k, isAnd ? x && y : x || y);
  });
}

Tensor whereOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 3, 3);
  const Tensor &cond = *operands[0], &a = *operands[1], &b = *operands[2];
  GXC_CHECK(cond.dtype() == DType::Bool && a.dtype() == b.dtype(),
            "layer '{}': where of {}, {} and {}", op.layerName(), dtypeName(cond.dtype()),
            dtypeName(a.dtype()), dtypeName(b.dtype()));
  Shape shape = broadcastShapes(op, cond.shape(), broadcastShapes(op, a.shape(), b.shape()));
  Tensor result = makeResult(op, shape);
  for (int64_t k = 0; k < result.numel(); ++k) {
    Coords coords = unravelIndex(k, shape);
    bool pick = cond.loadInt(broadcastIndex(coords, cond.shape())) != 0;
    const Tensor& from = pick ? a : b;
    copyElement(from, broadcastIndex(coords, from.shape()), result, k);
  }
  return result;
}

Tensor maskedFillOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  const Tensor &x = *operands[0], &mask = *operands[1];
  GXC_CHECK(mask.dtype() == DType::Bool, "layer '{}': a {} mask", op.layerName(),
            dtypeName(mask.dtype()));
  Tensor value = numberAs(x.dtype(), op.attrs.getFloat("value", 0.0));
  Tensor result = makeResult(op, x.shape());
  for (int64_t k = 0; k < result.numel(); ++k) {
    bool fill = mask.loadInt(broadcastIndex(unravelIndex(k, x.shape()), mask.shape())) != 0;
    if (fill)
      copyElement(value, 0, result, k);
    else
      copyElement(x, k, result, k);
  }
  return result;
}

Tensor castOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  Tensor result = makeResult(op, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) castElement(x, i, result);
  return result;
}

}  // namespace gxc::reference
