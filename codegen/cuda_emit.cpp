// The shared pieces of generated kernels (see cuda_emit.h).
#include "codegen/cuda_emit.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "ir/diagnostic.h"

namespace gxc::cuda {

int KernelArgs::indexOf(const Value* value) const {
  auto it = std::find(inputs.begin(), inputs.end(), value);
  GXC_CHECK(it != inputs.end(), "value '{}' is not an argument of its kernel", value->name);
  return 1 + static_cast<int>(it - inputs.begin());
}

std::string storageType(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "float";
    case DType::F16:
    case DType::BF16:
      return "unsigned short";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    case DType::F64:
      return "double";
    case DType::Bool:
      return "unsigned char";
  }
  return "";
}

std::string computeType(DType dtype) {
  if (dtype == DType::F64) return "double";
  if (isFloat(dtype)) return "float";
  if (isInteger(dtype)) return "gxc_i64";
  return "bool";
}

std::string familyName(const std::vector<const Op*>& ops) {
  if (ops.size() > 4) return fmt::format("{}_{}_ops", opName(ops.front()->kind), ops.size());
  std::string family;
  for (const Op* op : ops) family += (family.empty() ? "" : "_") + std::string(opName(op->kind));
  return family;
}

std::string bitsType(DType dtype) {
  switch (dtypeSize(dtype)) {
    case 1:
      return "unsigned char";
    case 2:
      return "unsigned short";
    case 4:
      return "unsigned";
    default:
      return "gxc_u64";
  }
}

std::string loadElement(DType dtype, const std::string& pointer, const std::string& index) {
  return fmt::format("gxc_ld_{}({}, {})", dtypeName(dtype), pointer, index);
}

std::string storeElement(DType dtype, const std::string& pointer, const std::string& index,
                         const std::string& value) {
  return fmt::format("gxc_st_{}({}, {}, {});", dtypeName(dtype), pointer, index, value);
}

std::string doubleLiteral(double value) {
  if (std::isnan(value) || std::isinf(value))
    return fmt::format("(double){}", floatLiteral(static_cast<float>(value)));
  return fmt::format("{:a}", value);
}

std::string floatLiteral(float value) {
  if (std::isnan(value) || std::isinf(value)) {
    return fmt::format("gxc_bits_float(0x{:08x}u)", std::bit_cast<uint32_t>(value));
  }
  // Hexadecimal: exact, so the kernel computes with the very float the reference does.
  return fmt::format("{:a}f", value);
}

std::string intLiteral(int64_t value) { return fmt::format("{}LL", value); }

std::string pointerDecls(const KernelArgs& args, bool bits) {
  auto type = [&](const Value* value) {
    return bits ? bitsType(value->type.dtype) : storageType(value->type.dtype);
  };
  std::string out =
      fmt::format("  {}* out = ({}*)args.p[0];\n", type(args.output), type(args.output));
  for (size_t i = 0; i < args.inputs.size(); ++i)
    out +=
        fmt::format("  const {0}* in{1} = (const {0}*)args.p[{1}];\n", type(args.inputs[i]), i + 1);
  return out;
}

std::vector<int64_t> rowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

namespace {

bool namesIdentifier(const std::string& code, const std::string& name) {
  auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    bool startsWord = at == 0 || !isWord(code[at - 1]);
    bool endsWord = at + name.size() == code.size() || !isWord(code[at + name.size()]);
    if (startsWord && endsWord) return true;
  }
  return false;
}

}  // namespace

std::string indexLiteral(int64_t value, IndexType type) {
  return type == IndexType::Int ? std::to_string(value) : intLiteral(value);
}

std::string unravel(const std::string& index, const Shape& shape, const std::string& prefix,
                    const std::string& indent, const std::string& user, size_t fromDim,
                    IndexType type) {
  std::vector<int64_t> strides = rowMajorStrides(shape);
  std::string out;
  for (size_t d = fromDim; d < shape.size(); ++d) {
    if (!namesIdentifier(user, prefix + std::to_string(d))) continue;
    // Division by the baked stride, then modulo the baked size: constants the compilers fold.
    std::string coord =
        strides[d] == 1 ? index : fmt::format("{} / {}", index, indexLiteral(strides[d], type));
    if (d > 0) coord = fmt::format("({}) % {}", coord, indexLiteral(shape[d], type));
    out += fmt::format("{}const {} {}{} = {};\n", indent,
                       type == IndexType::Int ? "int" : "gxc_i64", prefix, d, coord);
  }
  return out;
}

std::string elementwiseExpr(const Op& op, const std::vector<std::string>& operands) {
  if (isElementwiseAnyDType(op.kind)) return anyDTypeExpr(op, operands);
  if (isInteger(op.result->type.dtype)) return integerExpr(op, operands);
  // f64 computes in double: the C math functions without their f suffix, double literals,
  // and the double overloads of gxc_kernel.h's functions.
  const bool wide = op.result->type.dtype == DType::F64;
  auto math = [&](const char* name) { return wide ? std::string(name) : std::string(name) + "f"; };
  auto literal = [&](double value) {
    return wide ? doubleLiteral(value) : floatLiteral(static_cast<float>(value));
  };
  const std::string one = wide ? "1.0" : "1.0f";
  const std::string& a = operands.at(0);
  if (isElementwiseBinary(op.kind)) {
    std::string b = operands.size() == 2 ? operands[1] : literal(op.attrs.getFloat("scalar", 0.0));
    if (op.kind == OpKind::Pow)
      return fmt::format("gxc_pow({}, {}, {})", a, b, operands.size() == 1);
    if (op.kind == OpKind::Minimum) return fmt::format("gxc_minimum({}, {})", a, b);
    if (op.kind == OpKind::Maximum) return fmt::format("gxc_maximum({}, {})", a, b);
    const char* symbol = op.kind == OpKind::Add   ? "+"
                         : op.kind == OpKind::Sub ? "-"
                         : op.kind == OpKind::Mul ? "*"
                                                  : "/";
    return fmt::format("({} {} {})", a, symbol, b);
  }
  switch (op.kind) {
    case OpKind::Relu:
      return fmt::format("gxc_relu({})", a);
    case OpKind::Sigmoid:
      return fmt::format("gxc_sigmoid({})", a);
    case OpKind::Tanh:
      return fmt::format("{}({})", math("tanh"), a);
    case OpKind::Exp:
      return fmt::format("{}({})", math("exp"), a);
    case OpKind::Log:
      return fmt::format("{}({})", math("log"), a);
    case OpKind::Neg:
      return fmt::format("(-{})", a);
    case OpKind::Sqrt:
      return fmt::format("{}({})", math("sqrt"), a);
    case OpKind::Gelu:
      return (op.attrs.getString("approximate", "none") == "tanh" ? "gxc_gelu_tanh("
                                                                  : "gxc_gelu(") +
             a + ")";
    case OpKind::Abs:
      return fmt::format("{}({})", math("fabs"), a);
    case OpKind::Reciprocal:
      return fmt::format("({} / {})", one, a);
    case OpKind::Rsqrt:
      return fmt::format("({} / {}({}))", one, math("sqrt"), a);  // rsqrtf is approximate on GPUs
    case OpKind::Erf:
      return fmt::format("{}({})", math("erf"), a);
    case OpKind::Sin:
      return fmt::format("{}({})", math("sin"), a);
    case OpKind::Cos:
      return fmt::format("{}({})", math("cos"), a);
    case OpKind::Floor:
      return fmt::format("{}({})", math("floor"), a);
    case OpKind::Ceil:
      return fmt::format("{}({})", math("ceil"), a);
    case OpKind::Round:
      return fmt::format("{}({})", math("rint"), a);  // half to even
    case OpKind::Sign:
      return fmt::format("gxc_sign({})", a);
    case OpKind::Silu:
      return fmt::format("gxc_silu({})", a);
    case OpKind::Hardsigmoid:
      return fmt::format("gxc_hardsigmoid({})", a);
    case OpKind::Hardswish:
      return fmt::format("gxc_hardswish({})", a);
    case OpKind::LeakyRelu:
      return fmt::format("gxc_leaky_relu({}, {})", a,
                         literal(op.attrs.getFloat("negative_slope", 0.01)));
    case OpKind::Elu:
      return fmt::format("gxc_elu({}, {})", a, literal(op.attrs.getFloat("alpha", 1.0)));
    case OpKind::Clamp: {  // min, then max, as torch.clamp
      std::string v = a;
      if (op.attrs.has("min"))
        v = fmt::format("gxc_clamp_lo({}, {})", v, literal(op.attrs.getFloat("min", 0.0)));
      if (op.attrs.has("max"))
        v = fmt::format("gxc_clamp_hi({}, {})", v, literal(op.attrs.getFloat("max", 0.0)));
      return v;
    }
    case OpKind::Softplus:
      return fmt::format("gxc_softplus({}, {}, {})", a, literal(op.attrs.getFloat("beta", 1.0)),
                         literal(op.attrs.getFloat("threshold", 20.0)));
    case OpKind::BatchNorm: {  // operands: x, then its channel's mean, variance[, weight, bias]
      std::string normalized =
          fmt::format("(({} - {}) / {}({} + {}))", a, operands.at(1), math("sqrt"), operands.at(2),
                      literal(op.attrs.getFloat("eps", 1e-5)));
      if (operands.size() == 3) return normalized;
      return fmt::format("({} * {} + {})", normalized, operands.at(3), operands.at(4));
    }
    default:
      GXC_CHECK(false, "layer '{}': {} is not elementwise", op.layerName(), opName(op.kind));
  }
  return "";
}

namespace {

// Loads, into `name`, the element of a channelwise op's (batch_norm's) per-channel operand
// for the channel of op's element: op's dim 1, which is the root's dim (root rank - op rank
// + 1) where op's result broadcasts into the root. Never cached by value as the broadcast
// operands are: another member may read the same value broadcast the NumPy way.
std::string channelOperand(const Op& op, const Value& operand, const KernelArgs& args,
                           const std::set<const Op*>& members, const Shape& rootShape,
                           const std::string& indent, const std::string& coordPrefix,
                           const std::string& name, std::string& loads) {
  GXC_CHECK(!operand.producer || !members.count(operand.producer),
            "per-channel operand '{}' of '{}' computed in its kernel", operand.name,
            op.layerName());
  const Shape& opShape = op.result->type.shape;
  std::string index = opShape[1] == 1
                          ? "0"
                          : fmt::format("{}{}", coordPrefix, rootShape.size() - opShape.size() + 1);
  int arg = args.indexOf(&operand);
  loads += fmt::format("{}const {} {} = {};\n", indent, computeType(operand.type.dtype), name,
                       loadElement(operand.type.dtype, fmt::format("in{}", arg), index));
  return name;
}

}  // namespace

ElementwiseCode elementwiseValue(const std::vector<const Op*>& members, const Value* root,
                                 const KernelArgs& args,
                                 const std::map<const Value*, std::string>& given,
                                 const std::string& rootIndex, const std::string& indent,
                                 const std::string& prefix, const InnerRuns& runs) {
  const Shape& rootShape = root->type.shape;
  std::map<const Value*, std::string> names = given;
  std::string loads, compute;
  bool needsCoords = false;
  int channelLoads = 0;
  std::set<const Op*> memberSet(members.begin(), members.end());
  for (const Op* op : members) {
    std::vector<std::string> operands;
    for (const Value* operand : op->operands) {
      if (isChannelwise(op->kind) && !operands.empty()) {
        operands.push_back(channelOperand(*op, *operand, args, memberSet, rootShape, indent,
                                          prefix + "c",
                                          fmt::format("{}ch{}", prefix, channelLoads++), loads));
        needsCoords = needsCoords || op->result->type.shape[1] != 1;
        continue;
      }
      if (!names.count(operand)) {
        GXC_CHECK(!operand->producer || !memberSet.count(operand->producer),
                  "member '{}' read before it is computed", operand->name);
        int arg = args.indexOf(operand);
        std::string index = rootIndex;
        if (operand->type.shape != rootShape && runs.outerDims > 0 &&
            spansInnerDims(operand->type.shape, rootShape, runs.outerDims)) {
          index = runs.innerIndex;
        } else if (operand->type.shape != rootShape) {
          index = broadcastIndex(operand->type.shape, rootShape, prefix + "c", runs.indexType);
          needsCoords = true;
        }
        std::string name = fmt::format("{}x{}", prefix, arg);
        loads +=
            fmt::format("{}const {} {} = {};\n", indent, computeType(operand->type.dtype), name,
                        loadElement(operand->type.dtype, fmt::format("in{}", arg), index));
        names[operand] = name;
      }
      operands.push_back(names.at(operand));
    }
    std::string name = fmt::format("{}t{}", prefix, names.size());
    compute += fmt::format("{}const {} {} = {};\n", indent, computeType(op->result->type.dtype),
                           name, elementwiseExpr(*op, operands));
    names[op->result] = name;
  }
  if (!names.count(root)) {  // no member computes it: an input, read at the index
    GXC_CHECK(members.empty(), "the root '{}' of a kernel is never computed", root->name);
    int arg = args.indexOf(root);
    return {"", loadElement(root->type.dtype, fmt::format("in{}", arg), rootIndex)};
  }
  std::string coords = needsCoords ? unravel(rootIndex, rootShape, prefix + "c", indent, loads,
                                             runs.outerDims, runs.indexType)
                                   : "";
  return {coords + loads + compute, names.at(root)};
}

std::string elementwiseTail(const std::vector<const Op*>& members, const Value* root,
                            const KernelArgs& args,
                            const std::map<const Value*, std::string>& given,
                            const std::string& rootIndex, const std::string& indent,
                            const InnerRuns& runs) {
  GXC_CHECK(!members.empty() || given.count(root), "the root '{}' of a kernel is never computed",
            root->name);
  ElementwiseCode code = elementwiseValue(members, root, args, given, rootIndex, indent, "", runs);
  return code.statements + indent + storeElement(root->type.dtype, "out", rootIndex, code.value) +
         "\n";
}

IndexType gridStrideIndexType(int64_t count, bool simd) {
  return simd && count <= std::numeric_limits<int>::max() ? IndexType::Int : IndexType::I64;
}

std::string gridStrideLoop(const std::string& index, int64_t count, const std::string& indent,
                           bool simd) {
  const char* variant = !simd                                                ? ""
                        : gridStrideIndexType(count, simd) == IndexType::Int ? "_SIMD32"
                                                                             : "_SIMD";
  return fmt::format("{0}GXC_GRID_STRIDE{1}({2}, {3}) {{\n", indent, variant, index,
                     intLiteral(count));
}

LaunchShape gpuElementwiseLaunch(int64_t count) {
  int64_t blocks = std::max<int64_t>(1, (count + kGpuBlock - 1) / kGpuBlock);
  return {std::min(blocks, kGpuMaxGrid), kGpuBlock};
}

LaunchShape gpuRowLaunch(int64_t rows, int64_t rowLength) {
  // A warp-multiple block no wider than the row needs, up to kGpuBlock.
  int64_t block = 32;
  while (block < kGpuBlock && block < rowLength) block *= 2;
  return {std::clamp<int64_t>(rows, 1, kGpuMaxGrid), block};
}

LaunchShape hostElementwiseLaunch(int64_t count, int64_t workPerElement) {
  return {std::clamp<int64_t>(count * workPerElement / kHostBlockWork, 1, kHostMaxGrid), 1};
}

int64_t elementWork(const std::vector<const Op*>& members) {
  int64_t work = 1;
  for (const Op* op : members) {
    switch (op->kind) {
      case OpKind::Pow:
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::Exp:
      case OpKind::Log:
      case OpKind::Gelu:
      case OpKind::Erf:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Silu:
      case OpKind::Elu:
      case OpKind::Softplus:
        work += kHostMathWork;
        break;
      default:
        break;
    }
  }
  return work;
}

LaunchShape hostRowLaunch(int64_t rows, int64_t rowLength) {
  bool worthSpreading = rows > 1 && rows * rowLength >= 2 * kHostBlockWork;
  return {worthSpreading ? rows : 1, 1};
}

}  // namespace gxc::cuda
