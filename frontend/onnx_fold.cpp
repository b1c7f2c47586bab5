// Shape arithmetic evaluated at import (onnx_node.h: foldOnnxNode).
//
// Exporters compute the sizes a Reshape, Expand or Slice needs inside the graph: Shape ->
// Gather -> Unsqueeze -> Concat, Range, ConstantOfShape. gxc knows every shape when it lowers
// a model (symbolic dimensions are bound by then), so these nodes are evaluated here, on the
// host, and their results become the attributes of the layers that read them, never tensor
// ops. Any node of these ops whose inputs are all known is folded the same way, in the
// dtype's own arithmetic (integers exactly, floats in double, then rounded to the dtype).
// The arithmetic, comparisons and logic are in onnx_fold_arithmetic.cpp.
#include <algorithm>
#include <cmath>
#include <functional>

#include "frontend/onnx_fold_parts.h"
#include "frontend/onnx_node.h"

namespace gxc {

namespace onnx_fold {

bool isIntegral(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::Bool;
}

std::vector<int64_t> stridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// The element of `t` (broadcast to `shape`) at flat index `i` of `shape`.
int64_t broadcastIndex(const Shape& from, const Shape& shape, int64_t i) {
  std::vector<int64_t> strides = stridesOf(from);
  int64_t index = 0, rest = i;
  const size_t offset = shape.size() - from.size();
  std::vector<int64_t> outStrides = stridesOf(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = rest / outStrides[d];
    rest %= outStrides[d];
    if (d >= offset && from[d - offset] != 1) index += coord * strides[d - offset];
  }
  return index;
}

Shape broadcastShape(OnnxNode& node, const std::vector<const Tensor*>& inputs) {
  Shape shape;
  for (const Tensor* t : inputs) {
    Shape s = t->shape();
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    s.insert(s.begin(), shape.size() - s.size(), 1);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (s[d] == shape[d] || s[d] == 1) continue;
      if (shape[d] != 1) node.fail("operands of shapes that do not broadcast");
      shape[d] = s[d];
    }
  }
  return shape;
}

}  // namespace onnx_fold

namespace {

using onnx_fold::broadcastIndex;
using onnx_fold::broadcastShape;
using onnx_fold::isIntegral;
using onnx_fold::stridesOf;

Tensor intTensor(const std::vector<int64_t>& values, Shape shape) {
  Tensor t(DType::I64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.storeInt(static_cast<int64_t>(i), values[i]);
  return t;
}

int64_t normalizedAxis(OnnxNode& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) node.fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

// Copies elements by a map from output flat index to input flat index.
Tensor gatherElements(const Tensor& from, Shape shape, const std::function<int64_t(int64_t)>& at) {
  Tensor out(from.dtype(), std::move(shape));
  const size_t size = dtypeSize(from.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::copy_n(from.data() + at(i) * static_cast<int64_t>(size), size,
                out.data() + i * static_cast<int64_t>(size));
  return out;
}

std::optional<Tensor> foldMovement(OnnxNode& node, const std::vector<const Tensor*>& in) {
  const std::string& op = node.opType();
  const Tensor& x = *in[0];
  if (op == "Identity") return x;
  if (op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Flatten") {
    Shape shape;
    if (op == "Reshape") {
      std::vector<int64_t> spec = node.constantInts(1, "shape");
      int64_t known = 1, inferred = -1;
      for (size_t d = 0; d < spec.size(); ++d) {
        int64_t v = spec[d] == 0 && !node.intAttr("allowzero", 0) ? x.shape()[d] : spec[d];
        if (v == -1) inferred = static_cast<int64_t>(d);
        shape.push_back(v);
        if (v != -1) known *= v;
      }
      if (inferred >= 0) shape[static_cast<size_t>(inferred)] = known ? x.numel() / known : 0;
    } else if (op == "Flatten") {
      int64_t axis = node.intAttr("axis", 1);
      if (axis < 0) axis += x.rank();
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<size_t>(d)];
      shape = {outer, outer ? x.numel() / outer : 0};
    } else {
      std::vector<int64_t> axes = node.intsOf("axes", 1).value_or(std::vector<int64_t>{});
      const int64_t rank = x.rank() + (op == "Unsqueeze" ? static_cast<int64_t>(axes.size()) : 0);
      for (int64_t& a : axes) a = normalizedAxis(node, a, rank);
      if (op == "Unsqueeze") {
        shape = x.shape();
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) shape.insert(shape.begin() + a, 1);
      } else {
        for (int64_t d = 0; d < x.rank(); ++d) {
          bool drop =
              axes.empty() ? x.shape()[d] == 1 : std::count(axes.begin(), axes.end(), d) != 0;
          if (!drop) shape.push_back(x.shape()[d]);
        }
      }
    }
    if (checkedNumel(shape).value_or(-1) != x.numel())
      node.fail("cannot reshape {} elements to {}", x.numel(), shapeString(shape));
    return x.reshaped(shape);
  }
  if (op == "Concat") {
    int64_t axis = normalizedAxis(node, node.intAttr("axis", 0), x.rank());
    Shape shape = x.shape();
    shape[axis] = 0;
    for (const Tensor* t : in) shape[axis] += t->shape()[axis];
    Tensor out(x.dtype(), shape);
    std::vector<int64_t> strides = stridesOf(shape);
    const int64_t outer = axis == 0 ? 1 : x.numel() / (x.shape()[axis] * strides[axis]);
    int64_t offset = 0;
    const auto size = static_cast<int64_t>(dtypeSize(x.dtype()));
    for (const Tensor* t : in) {
      if (t->rank() != x.rank() || t->dtype() != x.dtype())
        node.fail("inputs of different ranks or dtypes");
      const int64_t run = t->shape()[axis] * strides[axis];
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(t->data() + o * run * size, run * size,
                    out.data() + (o * shape[axis] * strides[axis] + offset) * size);
      offset += run;
    }
    return out;
  }
  if (op == "Gather") {
    int64_t axis = normalizedAxis(node, node.intAttr("axis", 0), x.rank());
    const Tensor& index = *in[1];
    Shape shape(x.shape().begin(), x.shape().begin() + axis);
    shape.insert(shape.end(), index.shape().begin(), index.shape().end());
    shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
    const int64_t inner = stridesOf(x.shape())[axis], n = x.shape()[axis];
    return gatherElements(x, shape, [&](int64_t i) {
      int64_t o = i / (index.numel() * inner), k = (i / inner) % index.numel(), r = i % inner;
      int64_t j = index.loadInt(k);
      if (j < -n || j >= n) node.fail("index {} is out of range for a dim of {}", j, n);
      return (o * n + (j < 0 ? j + n : j)) * inner + r;
    });
  }
  if (op == "Slice") {
    std::vector<int64_t> starts = *node.intsOf("starts", 1), ends = *node.intsOf("ends", 2);
    std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
    for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
    if (auto given = node.intsOf("axes", 3)) axes = *given;
    if (node.hasInput(4)) steps = node.constantInts(4, "steps");
    std::vector<int64_t> begin(x.shape().size(), 0), step(x.shape().size(), 1);
    Shape shape = x.shape();
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = normalizedAxis(node, axes[k], x.rank()), n = x.shape()[a];
      if (steps[k] == 0) node.fail("a step of 0");
      auto clampTo = [&](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0) v += n;
        return std::clamp(v, lo, hi);
      };
      int64_t s = steps[k] > 0 ? clampTo(starts[k], 0, n) : clampTo(starts[k], -1, n - 1);
      int64_t e = steps[k] > 0 ? clampTo(ends[k], 0, n) : clampTo(ends[k], -1, n - 1);
      begin[a] = s, step[a] = steps[k];
      shape[a] = std::max<int64_t>(
          0, steps[k] > 0 ? (e - s + steps[k] - 1) / steps[k] : (s - e - steps[k] - 1) / -steps[k]);
    }
    std::vector<int64_t> inStrides = stridesOf(x.shape()), outStrides = stridesOf(shape);
    return gatherElements(x, shape, [&](int64_t i) {
      int64_t j = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        j += (begin[d] + (i / outStrides[d]) % shape[d] * step[d]) * inStrides[d];
      return j;
    });
  }
  if (op == "Expand") {
    std::vector<int64_t> target = node.constantInts(1, "shape");
    for (int64_t& d : target) d = std::max<int64_t>(d, 1);
    Tensor like(DType::Bool, Shape(target.begin(), target.end()));
    Shape shape = broadcastShape(node, {&x, &like});
    return gatherElements(x, shape, [&](int64_t i) { return broadcastIndex(x.shape(), shape, i); });
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = node.intsAttr("perm");
    if (perm.empty())
      for (int64_t d = x.rank(); d-- > 0;) perm.push_back(d);
    Shape shape;
    for (int64_t p : perm) shape.push_back(x.shape()[normalizedAxis(node, p, x.rank())]);
    std::vector<int64_t> inStrides = stridesOf(x.shape()), outStrides = stridesOf(shape);
    return gatherElements(x, shape, [&](int64_t i) {
      int64_t j = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        j += (i / outStrides[d]) % shape[d] * inStrides[perm[d]];
      return j;
    });
  }
  return std::nullopt;
}

}  // namespace

bool foldOnnxNode(OnnxNode& node) {
  const std::string& op = node.opType();
  if (op == "Constant") {
    node.checkAttrs({"value", "value_float", "value_floats", "value_int", "value_ints"});
    if (std::optional<Tensor> value = node.tensorAttr("value")) {
      node.setOutputConstant(0, std::move(*value));
    } else if (node.hasAttr("value_int") || node.hasAttr("value_ints")) {
      std::vector<int64_t> ints = node.hasAttr("value_int")
                                      ? std::vector<int64_t>{node.intAttr("value_int", 0)}
                                      : node.intsAttr("value_ints");
      node.setOutputConstant(
          0, intTensor(ints, node.hasAttr("value_int") ? Shape{}
                                                       : Shape{static_cast<int64_t>(ints.size())}));
    } else if (node.hasAttr("value_float") || node.hasAttr("value_floats")) {
      std::vector<double> floats = node.hasAttr("value_float")
                                       ? std::vector<double>{node.floatAttr("value_float", 0)}
                                       : node.floatsAttr("value_floats");
      Tensor t(DType::F32,
               node.hasAttr("value_float") ? Shape{} : Shape{static_cast<int64_t>(floats.size())});
      for (size_t i = 0; i < floats.size(); ++i) t.storeDouble(static_cast<int64_t>(i), floats[i]);
      node.setOutputConstant(0, std::move(t));
    } else {
      node.fail("it holds no value gxc reads (value, value_float(s), value_int(s))");
    }
    return true;
  }
  if (op == "Shape" || op == "Size") {
    Shape shape = node.inputType(0).shape;
    if (op == "Size") {
      node.setOutputConstant(0, intTensor({checkedNumel(shape).value_or(0)}, {}));
      return true;
    }
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t start = node.intAttr("start", 0), end = node.intAttr("end", rank);
    start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
    end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
    std::vector<int64_t> dims(shape.begin() + start, shape.begin() + std::max(start, end));
    node.setOutputConstant(0, intTensor(dims, {static_cast<int64_t>(dims.size())}));
    return true;
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> dims = node.constantInts(0, "shape");
    std::optional<Tensor> value = node.tensorAttr("value");
    Tensor out(value ? value->dtype() : DType::F32, Shape(dims.begin(), dims.end()));
    for (int64_t i = 0; value && i < out.numel(); ++i) out.storeDouble(i, value->loadDouble(0));
    if (value && isIntegral(value->dtype()))
      for (int64_t i = 0; i < out.numel(); ++i) out.storeInt(i, value->loadInt(0));
    node.setOutputConstant(0, std::move(out));
    return true;
  }
  if (op == "Range") {
    const Tensor* first = node.setting(0, "start");
    double start = node.settingScalar(0, "start"), limit = node.settingScalar(1, "limit"),
           delta = node.settingScalar(2, "delta");
    if (delta == 0) node.fail("a delta of 0");
    auto count = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    Tensor out(first->dtype(), {count});
    for (int64_t i = 0; i < count; ++i)
      if (isIntegral(out.dtype()))
        out.storeInt(i, first->loadInt(0) + i * node.setting(2, "delta")->loadInt(0));
      else
        out.storeDouble(i, start + static_cast<double>(i) * delta);
    node.setOutputConstant(0, std::move(out));
    return true;
  }
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < node.inputCount(); ++i) {
    if (!node.hasInput(i)) continue;
    const Tensor* value = node.constant(i);
    if (!value) return false;
    inputs.push_back(value);
  }
  if (inputs.empty() || node.outputCount() != 1) return false;
  std::optional<Tensor> out = foldMovement(node, inputs);
  if (!out) out = onnx_fold::foldArithmetic(node, inputs);
  if (!out) return false;
  node.setOutputConstant(0, std::move(*out));
  return true;
}

}  // namespace gxc
