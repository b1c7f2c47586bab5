// A fused convolution's epilogue (ir/fused_kernel.h: batch_norm, relu, clamp, hardswish and
// residual adds after a conv2d) as the post-ops oneDNN applies before it stores the
// convolution's result: the letters that name them, which key the primitive (cpu_conv.cpp), and
// the data they read. oneDNN's clip turns a NaN into its lower bound (x86's max returns its
// second operand when the first is NaN), where torch.clamp keeps it, so a clamp is no post-op:
// the host applies the clamps that end the chain to the stored result, in whatever layout it is
// in. oneDNN's relu does the same to NaN (torch.relu keeps it), so a relu is a clamp from 0
// here, and its hardswish clips too: a hardswish is applied after the store as well.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/host/step_tensors.h"
#include "tensor/tensor.h"

namespace gxc {

// Where a convolution's input image and result lie in channels-last bytes (NHWC) rather than
// the NCHW their types describe (runtime/host/channels_last.h), and the residual of an
// epilogue with one residual add: oneDNN reads and writes them so, without reordering.
struct ConvLayouts {
  bool imageChannelsLast = false;
  bool resultChannelsLast = false;
  bool residualChannelsLast = false;
};

// A member the host applies over the stored result: a clamp (a relu is one from 0) with its
// bounds (an infinity where it has none), or a hardswish.
struct StoredActivation {
  OpKind kind = OpKind::Clamp;  // Clamp or Hardswish
  float low = 0, high = 0;
};

struct ConvPostOps {
  // One letter per member: 'f' a batch_norm first, folded into the convolution's weights and
  // bias (as PyTorch's and ONNX Runtime's conv-bn folding do: per-channel post-ops cost
  // oneDNN's kernels a tenth of their time), 'b' a later batch_norm (a per-channel multiply,
  // then a per-channel add), 'a' the add of a residual of the result's shape, 'c' a clamp, a
  // relu or a hardswish (applied after the primitive, over its result: they end the chain).
  std::string shape;
  // The binary post-ops' second operands, f32, in post-op order: a batch_norm's scale and
  // shift (in `owned`), a residual's own bytes.
  std::vector<const float*> src1;
  std::vector<std::vector<float>> owned;
  // With 'f': the batch_norm folded in, each output channel's weight scale, and the bias the
  // convolution then adds (the batch_norm's shift plus the convolution's own bias, scaled).
  const Op* folded = nullptr;
  std::vector<float> weightScale, bias;
  // Each 'c' member, in order.
  std::vector<StoredActivation> activations;
};

// Whether the 'c' members of post-op shape `shape` (ConvPostOps::shape: clamps, relus and
// hardswishes, applied after the store) all end it: what the host takes (the others leave the
// epilogue to its generated kernel).
bool storedActivationsEndThePostOps(const std::string& shape);
// The letters of `shape` oneDNN's primitive applies: those before the 'c' members that end it.
std::string primitivePostOps(const std::string& shape);

// ConvPostOps::shape of `epilogue`, the members after `conv` in order, without their data.
std::string postOpShape(const Op& conv, const std::vector<const Op*>& epilogue);

// The post-ops of `epilogue`, the members after `conv` in order; `tensors` holds every value
// they read from outside the kernel. Requires an f32 convolution and members that keep the
// epilogue rules (a gxc bug otherwise).
ConvPostOps convPostOps(const Op& conv, const std::vector<const Op*>& epilogue,
                        const StepTensors& tensors);

}  // namespace gxc
