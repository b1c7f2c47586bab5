#include "ir/op_kinds.h"

#include <algorithm>

#include "ir/diagnostic.h"

namespace gxc {
namespace {

constexpr AttrKindMask kBool = maskOf(AttrKind::Bool);
constexpr AttrKindMask kInt = maskOf(AttrKind::Int);
// A float attribute may be written as an integer (`scalar: 2`).
constexpr AttrKindMask kFloat = maskOf(AttrKind::Float) | maskOf(AttrKind::Int);
constexpr AttrKindMask kString = maskOf(AttrKind::String);
constexpr AttrKindMask kIntList = maskOf(AttrKind::IntList);

std::vector<OpSchema> buildSchemas() {
  std::vector<OpSchema> s;
  auto binary = [&](OpKind k, std::string_view n) {
    s.push_back({k, n, 1, 2, {{"scalar", kFloat}}});
  };
  auto unary = [&](OpKind k, std::string_view n) { s.push_back({k, n, 1, 1, {}}); };
  auto reduction = [&](OpKind k, std::string_view n) {
    s.push_back({k, n, 1, 1, {{"axis", kInt | kIntList}, {"keepdim", kBool}}});
  };
  s.push_back({OpKind::Param,
               "param",
               0,
               0,
               {{"name", kString, true},
                {"init", kString, true},
                {"value", kFloat},
                {"mean", kFloat},
                {"std", kFloat},
                {"low", kFloat},
                {"high", kFloat},
                {"seed", kInt, true},
                {"file", kString},
                // A shard of the param (ir/param_shard.h).
                {"full_shape", kIntList},
                {"shard_axis", kInt},
                {"shard_start", kInt},
                {"shard_end", kInt}}});
  // `shard_of`: split-layers made this op as one shard of that layer (passes/split_layers.h).
  s.push_back(
      {OpKind::Matmul,
       "matmul",
       2,
       2,
       {{"transpose_a", kBool}, {"transpose_b", kBool}, {"shard_of", kString, false, true}}});
  s.push_back({OpKind::Linear,
               "linear",
               2,
               3,
               {{"in_features", kInt, true},
                {"out_features", kInt, true},
                {"bias", kBool},
                {"shard_of", kString, false, true}}});
  binary(OpKind::Add, "add");
  binary(OpKind::Sub, "sub");
  binary(OpKind::Mul, "mul");
  binary(OpKind::Div, "div");
  binary(OpKind::Pow, "pow");
  binary(OpKind::Minimum, "minimum");
  binary(OpKind::Maximum, "maximum");
  unary(OpKind::Relu, "relu");
  unary(OpKind::Sigmoid, "sigmoid");
  unary(OpKind::Tanh, "tanh");
  unary(OpKind::Exp, "exp");
  unary(OpKind::Log, "log");
  unary(OpKind::Neg, "neg");
  unary(OpKind::Sqrt, "sqrt");
  s.push_back({OpKind::Gelu, "gelu", 1, 1, {{"approximate", kString}}});
  unary(OpKind::Abs, "abs");
  unary(OpKind::Reciprocal, "reciprocal");
  unary(OpKind::Rsqrt, "rsqrt");
  unary(OpKind::Erf, "erf");
  unary(OpKind::Sin, "sin");
  unary(OpKind::Cos, "cos");
  unary(OpKind::Floor, "floor");
  unary(OpKind::Ceil, "ceil");
  unary(OpKind::Round, "round");
  unary(OpKind::Sign, "sign");
  unary(OpKind::Silu, "silu");
  unary(OpKind::Hardsigmoid, "hardsigmoid");
  unary(OpKind::Hardswish, "hardswish");
  s.push_back({OpKind::LeakyRelu, "leaky_relu", 1, 1, {{"negative_slope", kFloat}}});
  s.push_back({OpKind::Elu, "elu", 1, 1, {{"alpha", kFloat}}});
  s.push_back({OpKind::Softplus, "softplus", 1, 1, {{"beta", kFloat}, {"threshold", kFloat}}});
  s.push_back({OpKind::Clamp, "clamp", 1, 1, {{"min", kFloat}, {"max", kFloat}}});
  s.push_back({OpKind::Softmax, "softmax", 1, 1, {{"axis", kInt}}});
  s.push_back({OpKind::LogSoftmax, "log_softmax", 1, 1, {{"axis", kInt}}});
  s.push_back({OpKind::LayerNorm, "layer_norm", 1, 3, {{"eps", kFloat}, {"affine", kBool}}});
  reduction(OpKind::Sum, "sum");
  reduction(OpKind::Mean, "mean");
  reduction(OpKind::Max, "max");
  s.push_back({OpKind::Reshape, "reshape", 1, 1, {{"shape", kIntList, true}}});
  s.push_back({OpKind::Transpose, "transpose", 1, 1, {{"perm", kIntList}}});
  s.push_back({OpKind::Concat, "concat", 1, -1, {{"axis", kInt}}});
  s.push_back({OpKind::Embedding,
               "embedding",
               2,
               2,
               {{"num_embeddings", kInt, true}, {"embedding_dim", kInt, true}}});
  s.push_back({OpKind::To, "to", 1, 1, {{"device", kString, true}}});
  s.push_back({OpKind::MseLoss, "mse_loss", 2, 2, {{"reduction", kString}}});
  s.push_back({OpKind::CrossEntropy, "cross_entropy", 2, 3, {{"reduction", kString}}});
  s.push_back({OpKind::Copy, "copy", 1, 1, {}});
  // [start, end) along `axis`: how the compiler cuts batches and unpacks batched transfers.
  s.push_back(
      {OpKind::Slice, "slice", 1, 1, {{"axis", kInt}, {"start", kInt, true}, {"end", kInt, true}}});
  // Each of kernel_size, stride, padding and dilation is an int or an [h, w] pair; padding may
  // also be `same` (ir/conv_geometry.h reads them).
  s.push_back({OpKind::Conv2d,
               "conv2d",
               2,
               3,
               {{"in_channels", kInt, true},
                {"out_channels", kInt, true},
                {"kernel_size", kInt | kIntList, true},
                {"stride", kInt | kIntList},
                {"padding", kInt | kIntList | kString},
                {"dilation", kInt | kIntList},
                {"groups", kInt},
                {"bias", kBool}}});
  for (size_t i = 0; i < s.size(); ++i)
    GXC_CHECK(static_cast<size_t>(s[i].kind) == i, "op schema table out of enum order at {}", i);
  return s;
}

const std::vector<OpSchema>& schemas() {
  static const std::vector<OpSchema> table = buildSchemas();
  return table;
}

}  // namespace

const OpSchema& opSchema(OpKind kind) { return schemas().at(static_cast<size_t>(kind)); }

std::string_view opName(OpKind kind) { return opSchema(kind).name; }

std::optional<OpKind> parseOpKind(std::string_view name) {
  for (const OpSchema& schema : schemas())
    if (schema.name == name) return schema.kind;
  return std::nullopt;
}

std::vector<std::string_view> modelOpNames() {
  std::vector<std::string_view> names;
  for (const OpSchema& schema : schemas())
    if (isModelOp(schema.kind)) names.push_back(schema.name);
  std::sort(names.begin(), names.end());
  return names;
}

bool isModelOp(OpKind kind) {
  return kind != OpKind::Param && kind != OpKind::Copy && kind != OpKind::Slice;
}

bool isScheduleAttr(std::string_view name) {
  return name == "stream" || name == "wait" || name == "record" || name == "offset";
}

bool isKernelAttr(std::string_view name) { return name == "kernel"; }

bool isElementwiseBinary(OpKind kind) {
  return kind == OpKind::Add || kind == OpKind::Sub || kind == OpKind::Mul || kind == OpKind::Div ||
         kind == OpKind::Pow || kind == OpKind::Minimum || kind == OpKind::Maximum;
}

bool isElementwiseUnary(OpKind kind) {
  switch (kind) {
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Neg:
    case OpKind::Sqrt:
    case OpKind::Gelu:
    case OpKind::Abs:
    case OpKind::Reciprocal:
    case OpKind::Rsqrt:
    case OpKind::Erf:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Silu:
    case OpKind::Hardsigmoid:
    case OpKind::Hardswish:
    case OpKind::LeakyRelu:
    case OpKind::Elu:
    case OpKind::Softplus:
    case OpKind::Clamp:
      return true;
    default:
      return false;
  }
}

bool isReduction(OpKind kind) {
  return kind == OpKind::Sum || kind == OpKind::Mean || kind == OpKind::Max;
}

}  // namespace gxc
