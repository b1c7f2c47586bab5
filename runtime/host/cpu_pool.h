// max_pool2d on the host through oneDNN's pooling primitive: f32, x [N, C, H, W] (or [C, H, W]),
// read and written as NCHW or as channels-last bytes (NHWC). Between convolutions that keep
// their activations channels-last (channels_last.h), as ResNet's stem pool sits, it reads and
// writes them as they are, where the generated kernel reads NCHW: ResNet-18's stem pool at batch
// 8 took 0.9 ms in the generated kernel on one thread of this project's 2-core AVX-512 machine,
// 0.13 ms here on NCHW and 0.05 ms on NHWC, and the three reorders around it go too.
//
// Numbers: a max is exact, so results equal the reference's. A window holding a NaN is NaN and
// one of -inf only is -inf, as in torch, where oneDNN's max skips a NaN and starts from the
// lowest finite float: the outputs of the windows that hold either are computed again after the
// primitive (found by one vectorized pass over x; none in a model's usual data).
//
// Where oneDNN would pool an NCHW x with one of its loops in C++ (no jit pooling for NCHW on
// AVX2), x is reordered to channels-last and pooled there.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

// Whether the host runs `op`, alone in its step, here: an f32 max_pool2d. Channels-last
// placement (channels_last.cpp) and the dispatch of generated steps (hostLibraryCallFor) ask it.
bool cpuMaxPoolApplies(const Op& op);

// Which of the pool's tensors are channels-last bytes: a channels-last result only from a
// channels-last x.
struct PoolLayouts {
  bool inputChannelsLast = false;
  bool resultChannelsLast = false;
};

// `op` is a max_pool2d that cpuMaxPoolApplies to; `x` its operand, `result` its result, in
// `layouts`.
void cpuMaxPool(const Op& op, const ConstTensorView& x, TensorView result, PoolLayouts layouts);

// oneDNN's name of the implementation that pools `op` in `layouts` ("jit:avx2", ...), for tests.
std::string cpuMaxPoolImplementation(const Op& op, PoolLayouts layouts);

// The same with both NCHW: the host's library call for the op (hostLibraryCallFor).
void cpuMaxPoolNchw(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result);

}  // namespace gxc
