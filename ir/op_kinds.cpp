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

constexpr std::string_view kOpNames[] = {
#define GXC_NAME(id, name) name,
    GXC_OP_KINDS(GXC_NAME)
#undef GXC_NAME
};

// conv2d's and conv_transpose2d's attributes. Each of kernel_size, stride, padding and dilation
// (and conv_transpose2d's output_padding) is an int or an [h, w] pair; conv2d's padding may
// also be `same`, which torch has not for conv_transpose2d (ir/conv_geometry.h reads them).
std::vector<AttrSpec> convAttrs(bool transposed) {
  constexpr AttrKindMask pair = kInt | kIntList;
  std::vector<AttrSpec> attrs = {{"in_channels", kInt, true},
                                 {"out_channels", kInt, true},
                                 {"kernel_size", pair, true},
                                 {"stride", pair},
                                 {"padding", transposed ? pair : pair | kString},
                                 {"dilation", pair},
                                 {"groups", kInt},
                                 {"bias", kBool}};
  if (transposed) attrs.push_back({"output_padding", pair});
  return attrs;
}

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
                {"shard_end", kInt},
                // Training (passes/autodiff.h): `frozen` (train: keeps it), `role` (made by
                // the compiler: "gradient_seed", "optimizer_state", "rng_state"; not a
                // state_dict entry).
                // `buffer`: a module buffer that train-mode updates by assign, never by a
                // gradient (batch_norm's running statistics and count; a state_dict entry).
                {"frozen", kBool, false, true},
                {"buffer", kBool, false, true},
                {"role", kString, false, true}}});
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
  s.push_back({OpKind::LayerNorm,
               "layer_norm",
               1,
               3,
               {{"normalized_shape", kInt | kIntList}, {"eps", kFloat}, {"affine", kBool}}});
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
  // `weight_sum`: data-parallel's denominator of a mean (docs/ir.md, attributes the passes add).
  s.push_back({OpKind::CrossEntropy,
               "cross_entropy",
               2,
               3,
               {{"reduction", kString},
                {"ignore_index", kInt},
                {"label_smoothing", kFloat},
                {"weight_sum", kBool, false, true}}});
  s.push_back({OpKind::Copy, "copy", 1, 1, {}});
  // start:end:step along `axis`. In the IR `start` and `end` are always there, resolved to
  // 0 <= start < end <= dim (the frontend applies Python's rules to what a model wrote); the
  // compiler's own slices (how it cuts batches and unpacks batched transfers) have step 1.
  s.push_back({OpKind::Slice,
               "slice",
               1,
               1,
               {{"axis", kInt}, {"start", kInt}, {"end", kInt}, {"step", kInt}}});
  // Lowered by the frontend into slices (isMultiResultLayer); `outputs` names the results.
  for (OpKind k : {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge,
                   OpKind::LogicalAnd, OpKind::LogicalOr})
    binary(k, kOpNames[static_cast<size_t>(k)]);
  unary(OpKind::LogicalNot, "logical_not");
  s.push_back({OpKind::Where, "where", 3, 3, {}});
  s.push_back({OpKind::MaskedFill, "masked_fill", 2, 2, {{"value", kFloat, true}}});
  s.push_back({OpKind::Cast, "cast", 1, 1, {{"dtype", kString, true}}});
  // q, k, v, and an optional mask (bool: true attends; float: added to the scores).
  s.push_back({OpKind::ScaledDotProductAttention,
               "scaled_dot_product_attention",
               3,
               4,
               {{"is_causal", kBool}, {"scale", kFloat}}});
  s.push_back(
      {OpKind::Split, "split", 1, 1, {{"split_size", kInt | kIntList, true}, {"axis", kInt}}});
  s.push_back({OpKind::Chunk, "chunk", 1, 1, {{"chunks", kInt, true}, {"axis", kInt}}});
  s.push_back({OpKind::Squeeze, "squeeze", 1, 1, {{"axis", kInt}}});
  s.push_back({OpKind::Unsqueeze, "unsqueeze", 1, 1, {{"axis", kInt, true}}});
  s.push_back({OpKind::Flatten, "flatten", 1, 1, {{"start_dim", kInt}, {"end_dim", kInt}}});
  s.push_back({OpKind::Expand, "expand", 1, 1, {{"shape", kIntList, true}}});
  s.push_back({OpKind::Triu, "triu", 1, 1, {{"diagonal", kInt}}});
  s.push_back({OpKind::Tril, "tril", 1, 1, {{"diagonal", kInt}}});
  s.push_back({OpKind::Gather, "gather", 2, 2, {{"axis", kInt, true}}});
  s.push_back({OpKind::IndexSelect, "index_select", 2, 2, {{"axis", kInt, true}}});
  // `num_classes` is checked by the shape rule, whose message says why it is needed.
  s.push_back({OpKind::OneHot, "one_hot", 1, 1, {{"num_classes", kInt}}});
  s.push_back(
      {OpKind::Pad, "pad", 1, 1, {{"pad", kIntList, true}, {"mode", kString}, {"value", kFloat}}});
  s.push_back({OpKind::Repeat, "repeat", 1, 1, {{"repeats", kIntList, true}}});
  s.push_back({OpKind::Cumsum, "cumsum", 1, 1, {{"axis", kInt, true}}});
  reduction(OpKind::Min, "min");
  reduction(OpKind::Prod, "prod");
  // torch.argmax and argmin take one dim, or none: the index into the flattened tensor.
  s.push_back({OpKind::Argmax, "argmax", 1, 1, {{"axis", kInt}, {"keepdim", kBool}}});
  s.push_back({OpKind::Argmin, "argmin", 1, 1, {{"axis", kInt}, {"keepdim", kBool}}});
  reduction(OpKind::Logsumexp, "logsumexp");
  s.push_back({OpKind::Var,
               "var",
               1,
               1,
               {{"axis", kInt | kIntList}, {"correction", kInt}, {"keepdim", kBool}}});
  s.push_back({OpKind::Std,
               "std",
               1,
               1,
               {{"axis", kInt | kIntList}, {"correction", kInt}, {"keepdim", kBool}}});
  s.push_back(
      {OpKind::NllLoss,
       "nll_loss",
       2,
       3,
       {{"reduction", kString}, {"ignore_index", kInt}, {"weight_sum", kBool, false, true}}});
  s.push_back(
      {OpKind::BceWithLogits, "binary_cross_entropy_with_logits", 2, 3, {{"reduction", kString}}});
  s.push_back({OpKind::L1Loss, "l1_loss", 2, 2, {{"reduction", kString}}});
  s.push_back(
      {OpKind::SmoothL1Loss, "smooth_l1_loss", 2, 2, {{"reduction", kString}, {"beta", kFloat}}});
  s.push_back(
      {OpKind::RmsNorm,
       "rms_norm",
       1,
       2,
       {{"normalized_shape", kInt | kIntList}, {"eps", kFloat}, {"elementwise_affine", kBool}}});
  s.push_back({OpKind::GroupNorm,
               "group_norm",
               1,
               3,
               {{"num_groups", kInt, true},
                {"num_channels", kInt, true},
                {"eps", kFloat},
                {"affine", kBool}}});
  // With one operand the identity (inference, as nn.Dropout in eval mode); the train-mode
  // pass gives it a second, the step count, and a `seed`: then each element is kept with
  // probability 1 - p, scaled by 1 / (1 - p), by a mask drawn from the seed, the step and the
  // element's index (`mask_offset` + its index here, the whole batch's index once it is split).
  s.push_back({OpKind::Dropout,
               "dropout",
               1,
               2,
               {{"p", kFloat}, {"seed", kInt, false, true}, {"mask_offset", kInt, false, true}}});
  s.push_back({OpKind::Conv2d, "conv2d", 2, 3, convAttrs(false)});
  // kernel_size, stride (absent: kernel_size), padding and output_size are each an int or an
  // [h, w] pair (ir/pool_geometry.h reads them).
  s.push_back({OpKind::MaxPool2d,
               "max_pool2d",
               1,
               1,
               {{"kernel_size", kInt | kIntList, true},
                {"stride", kInt | kIntList},
                {"padding", kInt | kIntList},
                {"ceil_mode", kBool}}});
  s.push_back({OpKind::AvgPool2d,
               "avg_pool2d",
               1,
               1,
               {{"kernel_size", kInt | kIntList, true},
                {"stride", kInt | kIntList},
                {"padding", kInt | kIntList},
                {"ceil_mode", kBool},
                {"count_include_pad", kBool}}});
  s.push_back({OpKind::AdaptiveAvgPool2d,
               "adaptive_avg_pool2d",
               1,
               1,
               {{"output_size", kInt | kIntList, true}}});
  // x, then NAME.running_mean and NAME.running_var, then NAME.weight and NAME.bias if affine.
  s.push_back(
      {OpKind::BatchNorm,
       "batch_norm",
       3,
       5,
       {{"num_features", kInt, true}, {"eps", kFloat}, {"momentum", kFloat}, {"affine", kBool}}});
  // torch.topk(x, k, dim=axis, largest, sorted=True): both results always sorted.
  for (OpKind k : {OpKind::Topk, OpKind::TopkIndices})
    s.push_back({k,
                 kOpNames[static_cast<size_t>(k)],
                 1,
                 1,
                 {{"k", kInt, true}, {"axis", kInt}, {"largest", kBool}}});
  s.push_back({OpKind::ConvTranspose2d, "conv_transpose2d", 2, 3, convAttrs(true)});
  // assign(param, value): the optimizer's in-place update; its result is the param's buffer
  // holding `value` (ir/kernel_steps.h, StepKind::Assign).
  s.push_back({OpKind::Assign, "assign", 2, 2, {}});
  // (x, dy): the gradient of a pool's x given dy, that of its result (autodiff), with the
  // pool's own attributes; x's type. max_pool2d's goes to each window's argmax, recomputed from
  // x; avg_pool2d's spreads each window's dy over it, x giving only the shape.
  s.push_back({OpKind::MaxPool2dBackward, "max_pool2d_backward", 2, 2,
               s[static_cast<size_t>(OpKind::MaxPool2d)].attrs});
  s.push_back({OpKind::AvgPool2dBackward, "avg_pool2d_backward", 2, 2,
               s[static_cast<size_t>(OpKind::AvgPool2d)].attrs});
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

}  // namespace gxc
