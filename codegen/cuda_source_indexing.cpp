// Kernels of the format 1.1 ops that index, pad, tile or accumulate: gather, index_select,
// one_hot, pad, repeat (one thread per result element, elements moved as raw bits) and cumsum
// (one thread per line along the axis, summing in double, or in 64-bit integers); and training
// dropout, one thread per element, whose mask is drawn by index as the others read by one.
#include <cmath>

#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::cuda {
namespace {

std::string joined(const std::vector<std::string>& terms) {
  if (terms.empty()) return "0";
  std::string out = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) out += " + " + terms[i];
  return out;
}

// `out` and x as raw bits (in1), and the index as stored (in2).
std::string indexedDecls(const Op& op, const KernelArgs& args) {
  const Value* x = op.operands[0];
  const Value* index = op.operands[1];
  return fmt::format("  {0}* out = ({0}*)args.p[0];\n", bitsType(x->type.dtype)) +
         fmt::format("  const {0}* in{1} = (const {0}*)args.p[{1}];\n", bitsType(x->type.dtype),
                     args.indexOf(x)) +
         fmt::format("  const {0}* in{1} = (const {0}*)args.p[{1}];\n",
                     storageType(index->type.dtype), args.indexOf(index));
}

// The flat index into x of coordinates `c`0.. of the result, with the coordinate along `axis`
// replaced by `at`.
std::string xOffset(const Shape& x, int64_t axis, const std::string& at) {
  std::vector<int64_t> strides = rowMajorStrides(x);
  std::vector<std::string> terms;
  for (size_t d = 0; d < x.size(); ++d) {
    std::string coord = static_cast<int64_t>(d) == axis ? "(" + at + ")" : fmt::format("c{}", d);
    if (x[d] != 1 || static_cast<int64_t>(d) == axis)
      terms.push_back(fmt::format("{} * {}", coord, intLiteral(strides[d])));
  }
  return joined(terms);
}

// The executor checks the indices before it launches (an index out of range is the user's
// error, reported with the layer); here one out of range reads nothing and gives zero bits.
KernelBody indexedBody(const Op& op, const KernelArgs& args, const std::string& indexAt) {
  const Shape& x = op.operands[0]->type.shape;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), static_cast<int64_t>(x.size()));
  int64_t count = op.result->type.numel();
  std::string read = fmt::format(
      "    const gxc_i64 at = (gxc_i64)in{0}[{1}];\n"
      "    out[i] = at >= 0 && at < {2} ? in{3}[{4}] : ({5})0;\n",
      args.indexOf(op.operands[1]), indexAt, intLiteral(x[axis]), args.indexOf(op.operands[0]),
      xOffset(x, axis, "at"), bitsType(op.result->type.dtype));
  std::string body = indexedDecls(op, args) + gridStrideLoop("i", count, "  ") +
                     unravel("i", op.result->type.shape, "c", "    ", read) + read + "  }\n";
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count)};
}

KernelBody gatherKernel(const Op& op, const KernelArgs& args) {
  return indexedBody(op, args, "i");  // the index has the result's shape
}

KernelBody indexSelectKernel(const Op& op, const KernelArgs& args) {
  const Shape& x = op.operands[0]->type.shape;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), static_cast<int64_t>(x.size()));
  return indexedBody(op, args, fmt::format("c{}", axis));
}

KernelBody oneHotKernel(const Op& op, const KernelArgs& args) {
  int64_t classes = op.result->type.shape.back();
  int64_t count = op.result->type.numel();
  std::string body =
      pointerDecls(args) + gridStrideLoop("i", count, "  ") +
      fmt::format("    out[i] = in1[i / {0}] == i % {0} ? 1 : 0;\n  }}\n", intLiteral(classes));
  return {"one_hot", std::move(body), gpuElementwiseLaunch(count), hostElementwiseLaunch(count)};
}

// The fill value of a constant pad, as the result's stored value.
std::string fillValue(DType dtype, double value) {
  switch (dtype) {
    case DType::F32:
      return floatLiteral(static_cast<float>(value));
    case DType::F16:
      return fmt::format("gxc_f32_to_f16({})", floatLiteral(static_cast<float>(value)));
    case DType::BF16:
      return fmt::format("gxc_f32_to_bf16({})", floatLiteral(static_cast<float>(value)));
    case DType::F64:
      return doubleLiteral(value);
    case DType::Bool:  // true where nonzero, as torch's fill of a bool tensor
      return value != 0 ? "(unsigned char)1" : "(unsigned char)0";
    default:
      GXC_CHECK(isInteger(dtype), "pad of dtype {} has no fill value", dtypeName(dtype));
      return fmt::format("({}){}", storageType(dtype), intLiteral(static_cast<int64_t>(value)));
  }
}

KernelBody padKernel(const Op& op, const KernelArgs& args) {
  const Shape& x = op.operands[0]->type.shape;
  const Shape& out = op.result->type.shape;
  const std::vector<int64_t> pads = *op.attrs.getIntList("pad");
  std::string mode = op.attrs.getString("mode", "constant");
  std::vector<int64_t> strides = rowMajorStrides(x);
  std::string compute = "    bool inside = true;\n";
  std::vector<std::string> terms;
  for (size_t d = 0; d < x.size(); ++d) {
    size_t pair = x.size() - 1 - d;
    int64_t before = pair < pads.size() / 2 ? pads[2 * pair] : 0;
    std::string at = fmt::format("a{}", d);
    compute += fmt::format("    gxc_i64 {} = c{} - {};\n", at, d, intLiteral(before));
    if (mode == "reflect")  // mirrored about the edge element, which is not repeated
      compute += fmt::format("    {0} = {0} < 0 ? -{0} : {0} >= {1} ? {2} - {0} : {0};\n", at,
                             intLiteral(x[d]), intLiteral(2 * (x[d] - 1)));
    else if (mode == "replicate")
      compute += fmt::format("    {0} = {0} < 0 ? 0 : {0} >= {1} ? {1} - 1 : {0};\n", at,
                             intLiteral(x[d]));
    else if (before != 0 || x[d] != out[d])
      compute +=
          fmt::format("    inside = inside && {0} >= 0 && {0} < {1};\n", at, intLiteral(x[d]));
    terms.push_back(fmt::format("{} * {}", at, intLiteral(strides[d])));
  }
  compute += fmt::format("    out[i] = inside ? in1[{}] : {};\n", joined(terms),
                         fillValue(op.result->type.dtype, op.attrs.getFloat("value", 0.0)));
  int64_t count = op.result->type.numel();
  std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ") +
                     unravel("i", out, "c", "    ", compute) + compute + "  }\n";
  return {"pad", std::move(body), gpuElementwiseLaunch(count), hostElementwiseLaunch(count)};
}

KernelBody repeatKernel(const Op& op, const KernelArgs& args) {
  const Shape& x = op.operands[0]->type.shape;
  const Shape& out = op.result->type.shape;
  size_t lead = out.size() - x.size();
  std::vector<int64_t> strides = rowMajorStrides(x);
  std::vector<std::string> terms;
  for (size_t d = 0; d < x.size(); ++d)
    if (x[d] != 1)
      terms.push_back(
          fmt::format("c{} % {} * {}", lead + d, intLiteral(x[d]), intLiteral(strides[d])));
  std::string read = fmt::format("    out[i] = in1[{}];\n", joined(terms));
  int64_t count = op.result->type.numel();
  std::string body = pointerDecls(args, /*bits=*/true) + gridStrideLoop("i", count, "  ") +
                     unravel("i", out, "c", "    ", read) + read + "  }\n";
  return {"repeat", std::move(body), gpuElementwiseLaunch(count), hostElementwiseLaunch(count)};
}

KernelBody cumsumKernel(const Op& op, const KernelArgs& args) {
  const TensorType& x = op.operands[0]->type;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), x.rank());
  int64_t size = x.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
  int64_t lines = x.numel() / size;
  DType in = x.dtype, out = op.result->type.dtype;
  bool floats = isFloat(in);
  // Floats sum in double and store through their compute type (f32, or double for f64).
  std::string add = floats ? "sum += (double)" + loadElement(in, "in1", "at") + ";\n"
                           : "sum += (gxc_i64)in1[at];\n";
  std::string store =
      floats ? storeElement(out, "out", "at", fmt::format("({})sum", computeType(out))) + "\n"
             : "out[at] = sum;\n";
  std::string body =
      pointerDecls(args) + gridStrideLoop("line", lines, "  ") +
      fmt::format(
          "    const gxc_i64 start = line / {1} * {0} * {1} + line % {1};\n"
          "    {2} sum = 0;\n"
          "    for (gxc_i64 k = 0; k < {0}; ++k) {{\n"
          "      const gxc_i64 at = start + k * {1};\n"
          "      {3}      {4}    }}\n  }}\n",
          intLiteral(size), intLiteral(inner), floats ? "double" : "gxc_i64", add, store);
  return {"cumsum", std::move(body), gpuElementwiseLaunch(lines), {1, 1}};
}

// Training dropout (with a step count, in2): each element kept by gxc_dropout_keep, scaled
// by 1 / (1 - p); p = 1 keeps none.
KernelBody dropoutKernel(const Op& op, const KernelArgs& args) {
  const TensorType& x = op.operands[0]->type;
  double p = op.attrs.getFloat("p", 0.5);
  auto threshold = static_cast<int64_t>(std::llround(p * 16777216.0));
  std::string compute = computeType(x.dtype);
  std::string scale = x.dtype == DType::F64 ? doubleLiteral(p < 1 ? 1.0 / (1.0 - p) : 0.0)
                                            : floatLiteral(p < 1 ? 1.0f / (1.0f - p) : 0.0f);
  int in = args.indexOf(op.operands[0]), step = args.indexOf(op.operands[1]);
  std::string kept =
      fmt::format("gxc_dropout_keep({}ull, (gxc_u64)in{}[0], (gxc_u64)({} + i), {}ull)",
                  static_cast<uint64_t>(op.attrs.getInt("seed", 0)), step,
                  intLiteral(op.attrs.getInt("mask_offset", 0)), threshold);
  std::string value =
      fmt::format("{} ? {} * {} : ({})0", kept, loadElement(x.dtype, fmt::format("in{}", in), "i"),
                  scale, compute);
  std::string body = pointerDecls(args) + gridStrideLoop("i", x.numel(), "  ") + "    " +
                     storeElement(x.dtype, "out", "i", value) + "\n  }\n";
  return {"dropout", std::move(body), gpuElementwiseLaunch(x.numel()),
          hostElementwiseLaunch(x.numel())};
}

}  // namespace

KernelBody indexingKernel(const Op& op, const KernelArgs& args) {
  switch (op.kind) {
    case OpKind::Gather:
      return gatherKernel(op, args);
    case OpKind::IndexSelect:
      return indexSelectKernel(op, args);
    case OpKind::OneHot:
      return oneHotKernel(op, args);
    case OpKind::Pad:
      return padKernel(op, args);
    case OpKind::Repeat:
      return repeatKernel(op, args);
    case OpKind::Cumsum:
      return cumsumKernel(op, args);
    case OpKind::Dropout:
      return dropoutKernel(op, args);
    default:
      GXC_CHECK(false, "layer '{}': {} is not an indexing kernel", op.layerName(), opName(op.kind));
  }
  return {};
}

}  // namespace gxc::cuda
