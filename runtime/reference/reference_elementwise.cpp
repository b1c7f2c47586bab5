// Reference kernels of the elementwise ops: the unary activations and math functions (clamp
// among them), and add, sub, mul, div, pow, minimum and maximum with NumPy broadcasting or a
// `scalar` attribute.
//
// i32 and i64 operands (of add, sub, mul, minimum, maximum, neg, abs, sign, clamp) compute in
// int64 with two's complement wraparound, as torch: through uint64, where C++ leaves signed
// overflow undefined; an i32 result wraps to 32 bits on store. Never through float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <type_traits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// F.gelu: the exact form uses the Gaussian CDF through erf; "tanh" is its approximation.
template <typename T>
T gelu(T x, bool tanhForm) {
  if (tanhForm) {
    const T k = std::sqrt(T(2) / std::numbers::pi_v<T>);
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
  }
  return T(0.5) * x * (T(1) + std::erf(x / std::numbers::sqrt2_v<T>));
}

// The attributes a unary op reads, with PyTorch's defaults, in the compute type T (float for
// f32, f16 and bf16; double for f64).
template <typename T>
struct UnaryAttrs {
  bool tanhGelu = false;
  T negativeSlope = T(0.01);         // leaky_relu
  T alpha = T(1);                    // elu
  T beta = T(1), threshold = T(20);  // softplus
  std::optional<T> min, max;         // clamp
};

template <typename T>
UnaryAttrs<T> unaryAttrs(const Op& op) {
  UnaryAttrs<T> attrs;
  if (op.kind == OpKind::Gelu) {
    std::string approximate = op.attrs.getString("approximate", "none");
    GXC_CHECK(approximate == "none" || approximate == "tanh", "layer '{}': gelu approximate '{}'",
              op.layerName(), approximate);
    attrs.tanhGelu = approximate == "tanh";
  }
  attrs.negativeSlope = static_cast<T>(op.attrs.getFloat("negative_slope", 0.01));
  attrs.alpha = static_cast<T>(op.attrs.getFloat("alpha", 1.0));
  attrs.beta = static_cast<T>(op.attrs.getFloat("beta", 1.0));
  attrs.threshold = static_cast<T>(op.attrs.getFloat("threshold", 20.0));
  if (op.attrs.has("min")) attrs.min = static_cast<T>(op.attrs.getFloat("min", 0.0));
  if (op.attrs.has("max")) attrs.max = static_cast<T>(op.attrs.getFloat("max", 0.0));
  return attrs;
}

// ATen's forms, where the order of operations changes a float result (hardsigmoid,
// hardswish, silu, softplus, sign).
template <typename T>
T applyUnary(OpKind kind, T x, const UnaryAttrs<T>& attrs) {
  switch (kind) {
    case OpKind::Relu:  // NaN and -0 stay, as torch.relu (a clamp_min(0))
      return x < T(0) ? T(0) : x;
    case OpKind::Sigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case OpKind::Tanh:
      return std::tanh(x);
    case OpKind::Exp:
      return std::exp(x);
    case OpKind::Log:
      return std::log(x);
    case OpKind::Neg:
      return -x;
    case OpKind::Sqrt:
      return std::sqrt(x);
    case OpKind::Gelu:
      return gelu(x, attrs.tanhGelu);
    case OpKind::Abs:
      return std::fabs(x);
    case OpKind::Reciprocal:
      return T(1) / x;
    case OpKind::Rsqrt:
      return T(1) / std::sqrt(x);
    case OpKind::Erf:
      return std::erf(x);
    case OpKind::Sin:
      return std::sin(x);
    case OpKind::Cos:
      return std::cos(x);
    case OpKind::Floor:
      return std::floor(x);
    case OpKind::Ceil:
      return std::ceil(x);
    case OpKind::Round:
      return std::nearbyint(x);  // half to even, as torch.round
    case OpKind::Sign:
      return static_cast<T>((T(0) < x) - (x < T(0)));  // 0 for zeros and NaN, as torch
    case OpKind::Silu:
      return x / (T(1) + std::exp(-x));
    case OpKind::Hardsigmoid:
      return std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
    case OpKind::Hardswish:
      return x * std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
    case OpKind::LeakyRelu:
      return x > T(0) ? x : x * attrs.negativeSlope;
    case OpKind::Elu:
      return x > T(0) ? x : attrs.alpha * std::expm1(x);
    case OpKind::Softplus:
      return x * attrs.beta > attrs.threshold ? x
                                              : std::log1p(std::exp(x * attrs.beta)) / attrs.beta;
    case OpKind::Clamp: {  // min, then max: all max where min > max; NaN stays, as torch.clamp
      T v = x;
      if (attrs.min && v < *attrs.min) v = *attrs.min;
      if (attrs.max && v > *attrs.max) v = *attrs.max;
      return v;
    }
    default:
      GXC_CHECK(false, "{} is not an elementwise unary op", opName(kind));
  }
  return T(0);
}

template <typename T>
T applyBinary(OpKind kind, T a, T b) {
  switch (kind) {
    case OpKind::Add:
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    case OpKind::Div:
      return a / b;
    case OpKind::Pow:
      return std::pow(a, b);
    case OpKind::Minimum:  // NaN if either is, as torch.minimum
      return a != a || b != b ? std::numeric_limits<T>::quiet_NaN() : (a < b ? a : b);
    case OpKind::Maximum:
      return a != a || b != b ? std::numeric_limits<T>::quiet_NaN() : (a > b ? a : b);
    default:
      GXC_CHECK(false, "{} is not an elementwise binary op", opName(kind));
  }
  return T(0);
}

// torch.pow with a number is its sqrt and rsqrt for 0.5 and -0.5, not C's pow: NaN at -inf
// (pow gives +inf) and -0 at -0.
template <typename T>
T applyWithScalar(OpKind kind, T a, T scalar) {
  if (kind == OpKind::Pow && scalar == T(0.5)) return std::sqrt(a);
  if (kind == OpKind::Pow && scalar == T(-0.5)) return T(1) / std::sqrt(a);
  return applyBinary(kind, a, scalar);
}

// f64 is computed in double, every other float dtype in f32 (rounded to its dtype on store).
template <typename T>
T load(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, double>)
    return t.loadDouble(i);
  else
    return t.loadFloat(i);
}

template <typename T>
void store(Tensor& t, int64_t i, T value) {
  if constexpr (std::is_same_v<T, double>)
    t.storeDouble(i, value);
  else
    t.storeFloat(i, value);
}

template <typename T>
Tensor unaryIn(const Op& op, const Tensor& x) {
  const UnaryAttrs<T> attrs = unaryAttrs<T>(op);
  Tensor result = makeResult(op, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    store<T>(result, i, applyUnary<T>(op.kind, load<T>(x, i), attrs));
  return result;
}

template <typename T>
Tensor binaryIn(const Op& op, const Tensor& a, const Tensor* b) {
  if (!b) {
    // As PyTorch does for a float tensor and a Python number: the number is taken in the
    // tensor's compute type, the tensor on the left.
    T scalar = static_cast<T>(op.attrs.getFloat("scalar", 0.0));
    Tensor result = makeResult(op, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i)
      store<T>(result, i, applyWithScalar<T>(op.kind, load<T>(a, i), scalar));
    return result;
  }
  Shape shape = broadcastShapes(op, a.shape(), b->shape());
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    T x = load<T>(a, broadcastIndex(coords, a.shape()));
    T y = load<T>(*b, broadcastIndex(coords, b->shape()));
    store<T>(result, i, applyBinary<T>(op.kind, x, y));
  }
  return result;
}

// Two's complement arithmetic on int64: uint64's is modular.
int64_t wrapping(OpKind kind, int64_t a, int64_t b) {
  const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  switch (kind) {
    case OpKind::Add:
      return static_cast<int64_t>(x + y);
    case OpKind::Sub:
      return static_cast<int64_t>(x - y);
    case OpKind::Mul:
      return static_cast<int64_t>(x * y);
    case OpKind::Minimum:
      return std::min(a, b);
    case OpKind::Maximum:
      return std::max(a, b);
    default:
      GXC_CHECK(false, "{} is not an integer binary op", opName(kind));
  }
  return 0;
}

// The bounds and the scalar were checked integral (and within i32 for i32) by shape inference.
int64_t integerUnary(const Op& op, int64_t x) {
  const uint64_t negated = 0 - static_cast<uint64_t>(x);  // the minimum stays itself, as torch
  switch (op.kind) {
    case OpKind::Neg:
      return static_cast<int64_t>(negated);
    case OpKind::Abs:
      return x < 0 ? static_cast<int64_t>(negated) : x;
    case OpKind::Sign:
      return (0 < x) - (x < 0);
    case OpKind::Clamp:  // min, then max: all max where min > max, as torch.clamp
      if (op.attrs.has("min")) x = std::max(x, op.attrs.getInt("min", 0));
      if (op.attrs.has("max")) x = std::min(x, op.attrs.getInt("max", 0));
      return x;
    default:
      GXC_CHECK(false, "layer '{}': {} of integers", op.layerName(), opName(op.kind));
  }
  return 0;
}

void checkIntegerOperands(const Op& op, const Operands& operands) {
  for (const Tensor* t : operands)
    GXC_CHECK(t->dtype() == operands[0]->dtype(), "layer '{}': {} of {} and {}", op.layerName(),
              opName(op.kind), dtypeName(operands[0]->dtype()), dtypeName(t->dtype()));
}

Tensor integerUnaryOp(const Op& op, const Tensor& x) {
  Tensor result = makeResult(op, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) result.storeInt(i, integerUnary(op, x.loadInt(i)));
  return result;
}

Tensor integerBinaryOp(const Op& op, const Tensor& a, const Tensor* b) {
  if (!b) {
    const int64_t scalar = op.attrs.getInt("scalar", 0);
    Tensor result = makeResult(op, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i)
      result.storeInt(i, wrapping(op.kind, a.loadInt(i), scalar));
    return result;
  }
  Shape shape = broadcastShapes(op, a.shape(), b->shape());
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    result.storeInt(i, wrapping(op.kind, a.loadInt(broadcastIndex(coords, a.shape())),
                                b->loadInt(broadcastIndex(coords, b->shape()))));
  }
  return result;
}

}  // namespace

Tensor unaryOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  if (isInteger(x.dtype())) return integerUnaryOp(op, x);
  checkFloatOperands(op, operands, {0});
  return x.dtype() == DType::F64 ? unaryIn<double>(op, x) : unaryIn<float>(op, x);
}

Tensor binaryOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  const Tensor& a = *operands[0];
  const Tensor* b = operands.size() == 2 ? operands[1] : nullptr;
  if (isInteger(a.dtype())) {
    checkIntegerOperands(op, operands);
    return integerBinaryOp(op, a, b);
  }
  if (!b) {
    GXC_CHECK(op.attrs.has("scalar"), "layer '{}': {} with one operand and no scalar",
              op.layerName(), opName(op.kind));
    checkFloatOperands(op, operands, {0});
  } else {
    GXC_CHECK(!op.attrs.has("scalar"), "layer '{}': {} with two operands and a scalar",
              op.layerName(), opName(op.kind));
    checkFloatOperands(op, operands, {0, 1});
  }
  return a.dtype() == DType::F64 ? binaryIn<double>(op, a, b) : binaryIn<float>(op, a, b);
}

}  // namespace gxc::reference
