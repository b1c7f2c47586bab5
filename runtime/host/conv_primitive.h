// oneDNN's convolution primitives as the host runs them: for one geometry, post-op shape and
// set of plain layouts, the primitive (pinned to a layout its JIT kernels take where it adds a
// residual), its memory descriptors and the reorders between gxc's layouts and its own, made
// once per process and shared by every thread (runtime/host/cpu_conv.cpp runs them).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <vector>

#include "ir/conv_geometry.h"
#include "runtime/host/conv_post_ops.h"

namespace gxc {

// The post-ops' letters (conv_post_ops.h); empty: the convolution alone.
using PostOpShape = std::string;

// One convolution's primitive and its layouts: the plain ones of gxc's tensors (NCHW, and
// PyTorch's weight layouts) and the ones oneDNN chose for speed (blocked: channels in groups
// of 8 or 16 innermost, which its direct JIT kernels vectorize; on plain NCHW it falls back
// to im2col and a GEMM, which cost resnet_cifar twice its time). Every convolution takes them,
// however small: with the reorders made once (below), resnet_cifar at batch 8 took a fifth less
// time than with its small convolutions left plain, and its first step no more.
// Made once per geometry, post-op shape and plain layouts (preparedConv).
struct PreparedConv {
  dnnl::memory::desc plainSrc, plainWeights, plainDst, bias;
  dnnl::memory::desc residual;           // a residual add's operand as gxc holds it: NCHW, or NHWC
  dnnl::memory::desc src, weights, dst;  // the primitive's
  dnnl::memory::desc scratchpad;
  // The post-ops' second operands (per-channel scales and shifts, residuals), in post-op
  // order, the index of each among all post-ops, and for a residual the reorder into the
  // primitive's layout from `residual` (empty where they are the same, or for a scale or
  // shift).
  std::vector<dnnl::memory::desc> src1;
  std::vector<int> src1PostOp;
  std::vector<dnnl::reorder> src1In;
  // Whether oneDNN runs the post-ops in a fast implementation; where it does not, the caller
  // runs the convolution alone and the epilogue's kernel (and nothing else here is made).
  bool postOpsTaken = true;
  std::string implementation;  // oneDNN's name for it
  dnnl::primitive primitive;
  // Between the plain layouts and the primitive's, where they differ (else empty): made once,
  // as the primitive is; a reorder made at each call cost a small convolution a fifth of its
  // time.
  dnnl::reorder srcIn, weightsIn, dstOut;
};

// The prepared convolution for the process: a model runs the same ones every step. A primitive
// may run on several threads at once (the sim platform's streams): each call brings its own
// scratchpad (onednn_engine.h).
const PreparedConv& preparedConv(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                                 const ConvLayouts& layouts);

// Whether a conv2d with post-ops `post` that add a residual has a fast implementation (else
// preparedConv's postOpsTaken is false): asked without making a primitive.
bool residualPostOpsTaken(const ConvGeometry& g, const PostOpShape& post);

}  // namespace gxc
