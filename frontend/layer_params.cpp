// The params that layers create, named as the PyTorch module's state_dict names them (so a
// state_dict saved with safetensors loads unchanged), with the module's default init for
// those the weights file does not hold.
#include <cmath>

#include "frontend/model_builder.h"
#include "ir/conv_geometry.h"
#include "ir/infer_type.h"

namespace gxc {

std::vector<Value*> ModelBuilder::createdParams(const YamlNode& layer, OpKind kind,
                                                const std::string& name,
                                                const std::vector<Value*>& inputs,
                                                const Attrs& attrs) {
  SourceLoc loc = reader_.loc(layer);
  auto uniform = [](double bound) {
    Attrs init;
    init.set("init", std::string("uniform"));
    init.set("low", -bound);
    init.set("high", bound);
    return init;
  };
  auto named = [&](const char* what, DType dtype, Shape shape, Attrs init) {
    std::string paramName = name + "." + what;
    if (!checkedNumel(shape))
      reader_.fail(layer,
                   "layer '{}': param '{}' of shape {} has more elements than fit in 64 bits", name,
                   paramName, shapeString(shape));
    define(paramName, layer);
    return addParam(paramName, TensorType::of(dtype, std::move(shape)), init, loc);
  };
  DType dtype = inputs[0]->type.dtype;
  // nn.LayerNorm's, nn.RMSNorm's and nn.GroupNorm's initial weight and bias; made only for the
  // layers that have them (most layers have no params).
  auto filled = [](const char* value) {
    Attrs init;
    init.set("init", std::string(value));
    return init;
  };
  std::vector<Value*> params;
  if (kind == OpKind::Linear) {
    int64_t in = attrs.getInt("in_features", 0), out = attrs.getInt("out_features", 0);
    // nn.Linear's default: kaiming_uniform(a=sqrt(5)) for the weight and U(+-1/sqrt(in)) for
    // the bias, which both come to a bound of 1/sqrt(in_features).
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    params.push_back(named("weight", dtype, {out, in}, uniform(bound)));
    if (attrs.getBool("bias", true)) params.push_back(named("bias", dtype, {out}, uniform(bound)));
  } else if ((kind == OpKind::LayerNorm && attrs.getBool("affine", true)) ||
             (kind == OpKind::RmsNorm && attrs.getBool("elementwise_affine", true))) {
    const TensorType& x = inputs[0]->type;
    if (x.rank() == 0)
      reader_.fail(layer, "layer '{}': {}: needs at least one dimension, got {}", name,
                   opName(kind), x.withoutDevice());
    // Shaped as normalized_shape; shape inference then checks it against x's last dims.
    Shape normalized = normalizedShapeOf(attrs, x.shape);
    params.push_back(named("weight", dtype, normalized, filled("ones")));
    if (kind == OpKind::LayerNorm)
      params.push_back(named("bias", dtype, normalized, filled("zeros")));
  } else if (kind == OpKind::GroupNorm && attrs.getBool("affine", true)) {
    int64_t channels = attrs.getInt("num_channels", 0);
    if (channels <= 0)
      reader_.fail(layer, "layer '{}': group_norm: num_channels must be positive, got {}", name,
                   channels);
    params.push_back(named("weight", dtype, {channels}, filled("ones")));
    params.push_back(named("bias", dtype, {channels}, filled("zeros")));
  } else if (kind == OpKind::BatchNorm) {
    int64_t features = attrs.getInt("num_features", 0);
    if (features <= 0)
      reader_.fail(layer, "layer '{}': batch_norm: num_features must be positive, got {}", name,
                   features);
    // nn.BatchNorm's buffers and params, in the dtype of x as module.half() leaves them: the
    // statistics of an untrained module (mean 0, variance 1), weight 1 and bias 0. The IR op
    // reads the running statistics, then the affine params; num_batches_tracked (an i64 count,
    // 0-d) is only a state_dict entry until training counts batches with it.
    params.push_back(named("running_mean", dtype, {features}, filled("zeros")));
    params.push_back(named("running_var", dtype, {features}, filled("ones")));
    named("num_batches_tracked", DType::I64, {}, filled("zeros"));
    if (attrs.getBool("affine", true)) {
      params.push_back(named("weight", dtype, {features}, filled("ones")));
      params.push_back(named("bias", dtype, {features}, filled("zeros")));
    }
  } else if (kind == OpKind::Conv2d || kind == OpKind::ConvTranspose2d) {
    int64_t in = attrs.getInt("in_channels", 0), out = attrs.getInt("out_channels", 0);
    int64_t groups = attrs.getInt("groups", 1);
    if (in % groups != 0 || out % groups != 0)
      reader_.fail(layer,
                   "layer '{}': {}: groups = {} must divide in_channels = {} and "
                   "out_channels = {}",
                   name, opName(kind), groups, in, out);
    auto [kh, kw] = *attrPair(attrs, "kernel_size", 1);
    // nn.Conv2d's default, as nn.Linear's: kaiming_uniform(a=sqrt(5)) for the weight and
    // U(+-1/sqrt(fan_in)) for the bias, both a bound of 1/sqrt(fan_in). torch computes fan_in
    // from the weight's dim 1: in/groups for conv2d's [out, in/groups, kh, kw], out/groups for
    // conv_transpose2d's [in, out/groups, kh, kw].
    const bool transposed = kind == OpKind::ConvTranspose2d;
    Shape weight = transposed ? Shape{in, out / groups, kh, kw} : Shape{out, in / groups, kh, kw};
    double bound = 1.0 / std::sqrt(static_cast<double>(weight[1] * kh * kw));
    params.push_back(named("weight", dtype, weight, uniform(bound)));
    if (attrs.getBool("bias", true)) params.push_back(named("bias", dtype, {out}, uniform(bound)));
  } else if (kind == OpKind::Embedding) {
    Attrs normal;  // nn.Embedding's default: N(0, 1)
    normal.set("init", std::string("normal"));
    normal.set("mean", 0.0);
    normal.set("std", 1.0);
    params.push_back(named("weight", DType::F32,
                           {attrs.getInt("num_embeddings", 0), attrs.getInt("embedding_dim", 0)},
                           normal));
  } else if (weightKey(kind) && layer[weightKey(kind)]) {
    const char* key = weightKey(kind);
    std::string weight = reader_.name(layer[key], key);
    // A param, or (format 1.1) any value defined before the layer: an imported ONNX loss
    // reads its class weights from a graph input.
    Value* value = graph_->find(weight);
    if (!value)
      reader_.fail(layer[key], "layer '{}': {} '{}' must name a param or a value defined before it",
                   name, key, weight);
    params.push_back(value);
  }
  return params;
}

}  // namespace gxc
