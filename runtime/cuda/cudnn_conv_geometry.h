// How a conv2d or conv_transpose2d is posed to cuDNN: the tensors, paddings, strides and
// dilations of cuDNN's convolution descriptors, translated from ir/conv_geometry.h (PyTorch's
// rules), and whether cuDNN takes the op at all. Pure arithmetic, no cuDNN call: it compiles
// in every build, so that a machine without a GPU tests the translation the cuda platform's
// cuDNN path (runtime/cuda/cuda_cudnn_conv.h) executes.
//
// cuDNN sees every convolution as the forward one, x (*) w = y, cross-correlation, NCHW:
//   - conv2d: cuDNN's forward convolution; x is the op's input, y its result, w its weight
//     [out, in / groups, kh, kw] as stored.
//   - conv_transpose2d: cuDNN's backward-data convolution, which is exactly a transposed
//     convolution: the op's input is cuDNN's dy (the forward y), its result cuDNN's dx (the
//     forward x), and its weight [in, out / groups, kh, kw] is the forward weight as stored
//     (the forward convolution maps the transposed conv's out channels to its in channels).
// Groups are not a separate attribute in cuDNN's graph API: they follow from x's channels over
// w's second dimension.
//
// What cuDNN does not take, the generated kernel computes (the reason is kept, for a note):
//   - asymmetric padding (conv2d's `padding: same` with an even dilated kernel pads one more
//     on the bottom/right): cuDNN's engines take one padding per spatial dim. Padding the
//     input first would cost a copy of it for one edge row; the generated kernel needs none.
//   - a conv_transpose2d whose output_padding is not smaller than its stride (allowed where it
//     is smaller than the dilation): the forward convolution over its output would have more
//     positions than its input has, so the two descriptors disagree.
//   - dtypes other than f32, f16 and bf16.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace gxc {

struct CudnnConvGeometry {
  bool backwardData = false;  // conv_transpose2d: cuDNN's backward-data convolution
  DType dtype = DType::F32;
  // NCHW dims of cuDNN's forward view, x (*) w = y, and their packed strides.
  std::array<int64_t, 4> x{}, w{}, y{};
  std::array<int64_t, 4> xStrides{}, wStrides{}, yStrides{};
  std::array<int64_t, 2> padding{};  // per spatial dim (H, W), the same before and after
  std::array<int64_t, 2> strides{}, dilations{};
  int64_t groups = 1;  // x[1] / w[1]: what cuDNN infers from the dims
  bool bias = false;   // the op's third operand, one per output channel
  // Set where cuDNN does not take the op: why the generated kernel runs it instead.
  std::optional<std::string> generatedBecause;

  bool viaCudnn() const { return !generatedBecause; }
};

// Requires a conv2d or conv_transpose2d whose types are known (ir/conv_geometry.h's
// requirements; its errors are the model's, at the layer).
CudnnConvGeometry cudnnConvGeometry(const Op& op);

// Whether this gxc was built with cuDNN; without it, the cuda platform's convolutions run as
// their generated kernels.
bool builtWithCudnn();

// The strides of a packed (contiguous, row-major) tensor of `dims`.
std::array<int64_t, 4> packedStrides(const std::array<int64_t, 4>& dims);

}  // namespace gxc
