// Reference kernels of the elementwise ops: the unary activations and math functions (clamp
// among them), and add, sub, mul, div, pow, minimum and maximum with NumPy broadcasting or a
// `scalar` attribute.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// F.gelu: the exact form uses the Gaussian CDF through erf; "tanh" is its approximation.
float gelu(float x, bool tanhForm) {
  if (tanhForm) {
    const float k = std::sqrt(2.0f / std::numbers::pi_v<float>);
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  return 0.5f * x * (1.0f + std::erf(x / std::numbers::sqrt2_v<float>));
}

// The attributes a unary op reads, with PyTorch's defaults.
struct UnaryAttrs {
  bool tanhGelu = false;
  float negativeSlope = 0.01f;           // leaky_relu
  float alpha = 1.0f;                    // elu
  float beta = 1.0f, threshold = 20.0f;  // softplus
  std::optional<float> min, max;         // clamp
};

UnaryAttrs unaryAttrs(const Op& op) {
  UnaryAttrs attrs;
  if (op.kind == OpKind::Gelu) {
    std::string approximate = op.attrs.getString("approximate", "none");
    GXC_CHECK(approximate == "none" || approximate == "tanh", "layer '{}': gelu approximate '{}'",
              op.layerName(), approximate);
    attrs.tanhGelu = approximate == "tanh";
  }
  attrs.negativeSlope = static_cast<float>(op.attrs.getFloat("negative_slope", 0.01));
  attrs.alpha = static_cast<float>(op.attrs.getFloat("alpha", 1.0));
  attrs.beta = static_cast<float>(op.attrs.getFloat("beta", 1.0));
  attrs.threshold = static_cast<float>(op.attrs.getFloat("threshold", 20.0));
  if (op.attrs.has("min")) attrs.min = static_cast<float>(op.attrs.getFloat("min", 0.0));
  if (op.attrs.has("max")) attrs.max = static_cast<float>(op.attrs.getFloat("max", 0.0));
  return attrs;
}

// ATen's forms, where the order of operations changes a float result (hardsigmoid,
// hardswish, silu, softplus, sign).
float applyUnary(OpKind kind, float x, const UnaryAttrs& attrs) {
  switch (kind) {
    case OpKind::Relu:
      return x > 0.0f ? x : 0.0f;
    case OpKind::Sigmoid:
      return 1.0f / (1.0f + std::exp(-x));
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
      return 1.0f / x;
    case OpKind::Rsqrt:
      return 1.0f / std::sqrt(x);
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
      return static_cast<float>((0.0f < x) - (x < 0.0f));  // 0 for zeros and NaN, as torch
    case OpKind::Silu:
      return x / (1.0f + std::exp(-x));
    case OpKind::Hardsigmoid:
      return std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case OpKind::Hardswish:
      return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case OpKind::LeakyRelu:
      return x > 0.0f ? x : x * attrs.negativeSlope;
    case OpKind::Elu:
      return x > 0.0f ? x : attrs.alpha * std::expm1(x);
    case OpKind::Softplus:
      return x * attrs.beta > attrs.threshold ? x
                                              : std::log1p(std::exp(x * attrs.beta)) / attrs.beta;
    case OpKind::Clamp: {  // min, then max: all max where min > max; NaN stays, as torch.clamp
      float v = x;
      if (attrs.min && v < *attrs.min) v = *attrs.min;
      if (attrs.max && v > *attrs.max) v = *attrs.max;
      return v;
    }
    default:
      GXC_CHECK(false, "{} is not an elementwise unary op", opName(kind));
  }
  return 0.0f;
}

float applyBinary(OpKind kind, float a, float b) {
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
      return a != a || b != b ? std::numeric_limits<float>::quiet_NaN() : (a < b ? a : b);
    case OpKind::Maximum:
      return a != a || b != b ? std::numeric_limits<float>::quiet_NaN() : (a > b ? a : b);
    default:
      GXC_CHECK(false, "{} is not an elementwise binary op", opName(kind));
  }
  return 0.0f;
}

}  // namespace

Tensor unaryOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  checkFloatOperands(op, operands, {0});
  const UnaryAttrs attrs = unaryAttrs(op);
  const Tensor& x = *operands[0];
  Tensor result = makeResult(op, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    result.storeFloat(i, applyUnary(op.kind, x.loadFloat(i), attrs));
  return result;
}

Tensor binaryOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  const Tensor& a = *operands[0];
  if (operands.size() == 1) {
    GXC_CHECK(op.attrs.has("scalar"), "layer '{}': {} with one operand and no scalar",
              op.layerName(), opName(op.kind));
    checkFloatOperands(op, operands, {0});
    // As PyTorch does for a float tensor and a Python number: the number is taken in the
    // tensor's compute type (f32), the tensor on the left.
    float scalar = static_cast<float>(op.attrs.getFloat("scalar", 0.0));
    Tensor result = makeResult(op, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i)
      result.storeFloat(i, applyBinary(op.kind, a.loadFloat(i), scalar));
    return result;
  }
  GXC_CHECK(!op.attrs.has("scalar"), "layer '{}': {} with two operands and a scalar",
            op.layerName(), opName(op.kind));
  checkFloatOperands(op, operands, {0, 1});
  const Tensor& b = *operands[1];
  Shape shape = broadcastShapes(op, a.shape(), b.shape());
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    float x = a.loadFloat(broadcastIndex(coords, a.shape()));
    float y = b.loadFloat(broadcastIndex(coords, b.shape()));
    result.storeFloat(i, applyBinary(op.kind, x, y));
  }
  return result;
}

}  // namespace gxc::reference
