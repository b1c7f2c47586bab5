// Arithmetic, comparisons and logic on values known at import (onnx_fold_parts.h): the shape
// arithmetic exporters write, in the dtype's own arithmetic (integers exactly, floats in
// double, then rounded to the dtype). Exporters also write a floor division of sizes as Div
// followed by a rounding fix-up (Less, Xor, Mod, Equal, Not, And, Sub, Where): those ops fold
// too, Mod and Xor only here (gxc has no layer for them).
#include <algorithm>
#include <cmath>
#include <functional>

#include "frontend/onnx_file.h"
#include "frontend/onnx_fold_parts.h"

namespace gxc::onnx_fold {
namespace {

using IntFn = std::function<int64_t(const std::vector<int64_t>&)>;
using FloatFn = std::function<double(const std::vector<double>&)>;

// Elementwise over broadcast inputs; the result has `dtype`.
Tensor elementwise(OnnxNode& node, const std::vector<const Tensor*>& inputs, DType dtype,
                   const IntFn& onInts, const FloatFn& onFloats) {
  Shape shape = broadcastShape(node, inputs);
  Tensor out(dtype, shape);
  bool integers = std::all_of(inputs.begin(), inputs.end(),
                              [](const Tensor* t) { return isIntegral(t->dtype()); });
  std::vector<int64_t> ints(inputs.size());
  std::vector<double> floats(inputs.size());
  for (int64_t i = 0; i < out.numel(); ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      int64_t j = broadcastIndex(inputs[k]->shape(), shape, i);
      if (integers)
        ints[k] = inputs[k]->loadInt(j);
      else
        floats[k] = inputs[k]->loadDouble(j);
    }
    if (integers && isIntegral(dtype))
      out.storeInt(i, onInts(ints));
    else if (integers)
      out.storeDouble(i, static_cast<double>(onInts(ints)));
    else if (isIntegral(dtype))
      out.storeInt(i, static_cast<int64_t>(onFloats(floats)));
    else
      out.storeDouble(i, onFloats(floats));
  }
  return out;
}

}  // namespace

std::optional<Tensor> foldArithmetic(OnnxNode& node, const std::vector<const Tensor*>& in) {
  const std::string& op = node.opType();
  const DType dtype = in[0]->dtype();
  auto binary = [&](auto intOp, auto floatOp, DType out) {
    return elementwise(
        node, in, out, [&](const std::vector<int64_t>& v) { return intOp(v[0], v[1]); },
        [&](const std::vector<double>& v) { return floatOp(v[0], v[1]); });
  };
  if (op == "Add") return binary(std::plus<int64_t>(), std::plus<double>(), dtype);
  if (op == "Sub") return binary(std::minus<int64_t>(), std::minus<double>(), dtype);
  if (op == "Mul") return binary(std::multiplies<int64_t>(), std::multiplies<double>(), dtype);
  if (op == "Div")
    return binary(
        [&](int64_t a, int64_t b) {
          if (b == 0) node.fail("an integer division by zero");
          return a / b;  // ONNX divides integers truncating, as C++ does
        },
        std::divides<double>(), dtype);
  if (op == "Mod") {
    // fmod = 0: the remainder takes the divisor's sign, as Python's % (integers only);
    // fmod = 1: the dividend's, as C's fmod. Exporters write `//` on sizes as Div and a Mod
    // that corrects its rounding.
    const bool cStyle = node.intAttr("fmod", 0) != 0;
    if (!cStyle && !isIntegral(dtype)) node.fail("fmod = 0 on floats (ONNX requires fmod = 1)");
    return binary(
        [&](int64_t a, int64_t b) {
          if (b == 0) node.fail("an integer remainder by zero");
          int64_t r = a % b;
          return !cStyle && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
        },
        [](double a, double b) { return std::fmod(a, b); }, dtype);
  }
  if (op == "Pow")
    return binary(
        [&](int64_t a, int64_t b) {
          if (b < 0) node.fail("an integer to a negative power");
          int64_t r = 1;
          for (int64_t k = 0; k < b; ++k) r *= a;
          return r;
        },
        [](double a, double b) { return std::pow(a, b); }, dtype);
  if (op == "Min" && in.size() == 2)
    return binary([](int64_t a, int64_t b) { return std::min(a, b); },
                  [](double a, double b) { return std::fmin(a, b); }, dtype);
  if (op == "Max" && in.size() == 2)
    return binary([](int64_t a, int64_t b) { return std::max(a, b); },
                  [](double a, double b) { return std::fmax(a, b); }, dtype);
  if (op == "Equal") return binary(std::equal_to<int64_t>(), std::equal_to<double>(), DType::Bool);
  if (op == "Less") return binary(std::less<int64_t>(), std::less<double>(), DType::Bool);
  if (op == "Greater") return binary(std::greater<int64_t>(), std::greater<double>(), DType::Bool);
  if (op == "And")
    return binary(std::logical_and<int64_t>(), std::logical_and<double>(), DType::Bool);
  if (op == "Or") return binary(std::logical_or<int64_t>(), std::logical_or<double>(), DType::Bool);
  if (op == "Xor")
    return binary([](int64_t a, int64_t b) { return (a != 0) != (b != 0); },
                  [](double a, double b) { return (a != 0) != (b != 0); }, DType::Bool);
  if (op == "LessOrEqual")
    return binary(std::less_equal<int64_t>(), std::less_equal<double>(), DType::Bool);
  if (op == "GreaterOrEqual")
    return binary(std::greater_equal<int64_t>(), std::greater_equal<double>(), DType::Bool);
  auto unary = [&](auto intOp, auto floatOp, DType out) {
    return elementwise(
        node, in, out, [&](const std::vector<int64_t>& v) { return intOp(v[0]); },
        [&](const std::vector<double>& v) { return floatOp(v[0]); });
  };
  if (op == "Neg") return unary(std::negate<int64_t>(), std::negate<double>(), dtype);
  if (op == "Not")
    return unary(std::logical_not<int64_t>(), std::logical_not<double>(), DType::Bool);
  if (op == "Abs")
    return unary([](int64_t a) { return a < 0 ? -a : a; }, [](double a) { return std::fabs(a); },
                 dtype);
  if (op == "Sign")
    return unary([](int64_t a) { return int64_t{a > 0} - int64_t{a < 0}; },
                 [](double a) { return a > 0   ? 1.0
                                       : a < 0 ? -1.0
                                               : a; }, dtype);
  if (op == "Floor" || op == "Ceil" || op == "Round") {
    double (*round)(double) = op == "Floor"  ? static_cast<double (*)(double)>(std::floor)
                              : op == "Ceil" ? static_cast<double (*)(double)>(std::ceil)
                                             : static_cast<double (*)(double)>(std::nearbyint);
    return unary([](int64_t a) { return a; }, round, dtype);  // Round: half to even, as ONNX
  }
  if (op == "Sqrt" && !isIntegral(dtype))
    return unary([](int64_t a) { return a; }, [](double a) { return std::sqrt(a); }, dtype);
  if (op == "Cast") {
    std::optional<DType> to = dtypeFromOnnx(static_cast<int32_t>(node.intAttr("to", 0)));
    if (!to) return std::nullopt;
    return unary([](int64_t a) { return a; }, [](double a) { return a; }, *to);
  }
  if (op == "Where")
    return elementwise(
        node, in, in[1]->dtype(), [](const std::vector<int64_t>& v) { return v[0] ? v[1] : v[2]; },
        [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; });
  return std::nullopt;
}

}  // namespace gxc::onnx_fold
