#include "runtime/host/conv_post_ops.h"

#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "ir/fused_kernel.h"

namespace gxc {
namespace {

// batch_norm at inference as a per-channel scale and shift: (x - mean) / sqrt(var + eps) *
// weight + bias = x * scale + shift, the two computed in double from the op's params.
void batchNormScaleShift(const Op& bn, const StepTensors& tensors, std::vector<float>& scale,
                         std::vector<float>& shift) {
  std::vector<std::vector<float>> params;
  for (size_t i = 1; i < bn.operands.size(); ++i)
    params.push_back(tensors.at(bn.operands[i]).toFloats());
  const double eps = bn.attrs.getFloat("eps", 1e-5);
  const size_t channels = params[0].size();
  scale.resize(channels);
  shift.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    double inverse = 1.0 / std::sqrt(static_cast<double>(params[1][c]) + eps);
    double weight = params.size() == 4 ? params[2][c] : 1.0;
    double bias = params.size() == 4 ? params[3][c] : 0.0;
    scale[c] = static_cast<float>(inverse * weight);
    shift[c] = static_cast<float>(bias - params[0][c] * inverse * weight);
  }
}

}  // namespace

std::string postOpShape(const Op& conv, const std::vector<const Op*>& epilogue) {
  std::string shape;
  const Value* fed = conv.result;
  for (const Op* member : epilogue) {
    if (member->kind == OpKind::BatchNorm)
      shape += fed == conv.result ? 'f' : 'b';
    else if (member->kind == OpKind::Clamp || member->kind == OpKind::Relu ||
             member->kind == OpKind::Hardswish)
      shape += 'c';  // after the store: a relu clamps from 0, keeping NaN as torch.relu
    else
      shape += 'a';
    fed = member->result;
  }
  return shape;
}

ConvPostOps convPostOps(const Op& conv, const std::vector<const Op*>& epilogue,
                        const StepTensors& tensors) {
  GXC_CHECK(conv.result->type.dtype == DType::F32, "layer '{}': post-ops for a {} convolution",
            conv.layerName(), dtypeName(conv.result->type.dtype));
  ConvPostOps post;
  post.shape = postOpShape(conv, epilogue);
  post.owned.reserve(2 * epilogue.size());  // src1 points into them: never reallocated
  const Value* fed = conv.result;
  for (size_t i = 0; i < epilogue.size(); ++i) {
    const Op& member = *epilogue[i];
    GXC_CHECK(isConvEpilogueMember(fed, member),
              "layer '{}': {} cannot follow '{}' in a convolution's epilogue", member.layerName(),
              opName(member.kind), conv.layerName());
    if (post.shape[i] == 'f') {
      // scale * (conv(x, w) + b) + shift = conv(x, scale * w) + (scale * b + shift)
      batchNormScaleShift(member, tensors, post.weightScale, post.bias);
      if (conv.operands.size() == 3) {
        std::vector<float> own = tensors.at(conv.operands[2]).toFloats();
        for (size_t c = 0; c < own.size(); ++c) post.bias[c] += post.weightScale[c] * own[c];
      }
      post.folded = &member;
    } else if (post.shape[i] == 'b') {
      std::vector<float>& scale = post.owned.emplace_back();
      std::vector<float>& shift = post.owned.emplace_back();
      batchNormScaleShift(member, tensors, scale, shift);
      post.src1.push_back(scale.data());
      post.src1.push_back(shift.data());
    } else if (post.shape[i] == 'a') {
      post.src1.push_back(tensors.at(residualOf(member, fed)).as<float>());
    } else if (member.kind == OpKind::Hardswish) {
      post.activations.push_back({OpKind::Hardswish});
    } else if (member.kind == OpKind::Relu) {
      post.activations.push_back({OpKind::Clamp, 0.0f, std::numeric_limits<float>::infinity()});
    } else if (post.shape[i] == 'c') {
      const float infinity = std::numeric_limits<float>::infinity();
      post.activations.push_back(
          {OpKind::Clamp,
           member.attrs.has("min") ? static_cast<float>(member.attrs.getFloat("min", 0))
                                   : -infinity,
           member.attrs.has("max") ? static_cast<float>(member.attrs.getFloat("max", 0))
                                   : infinity});
    }
    fed = member.result;
  }
  return post;
}

std::string primitivePostOps(const std::string& shape) { return shape.substr(0, shape.find('c')); }

bool storedActivationsEndThePostOps(const std::string& shape) {
  const size_t first = shape.find('c');
  return first == std::string::npos || shape.find_first_not_of('c', first) == std::string::npos;
}

}  // namespace gxc
