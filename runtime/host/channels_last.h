// Which convolution (and max pool) results the host keeps in channels-last bytes (NHWC) rather
// than the NCHW their type describes: those that only convolutions (and max pools) read.
//
// oneDNN's fast convolutions read and write channels-last or channel-blocked layouts, so a
// convolution whose input and output are NCHW reorders both (a tenth of resnet_cifar's time).
// Between two convolutions the NCHW copy is never needed: the first writes channels-last and
// the second reads it as it is, as ONNX Runtime's NCHWc transformer keeps activations blocked
// from one convolution to the next.
//
// A value qualifies when it is the result of a Conv step that the host computes whole (an f32
// conv2d whose epilogue cpuConvolutionTakesEpilogue takes: else the generated epilogue would
// read the result as NCHW), or of a max pool oneDNN runs (cpu_pool.h) whose x qualifies; it is
// not a graph output; and every step that reads it is either such a pool or a Conv step of an
// f32 conv2d reading it as the convolution's input image only, or as the residual of its
// epilogue's one add only, where oneDNN takes that epilogue (not a copy, a view or anything
// else that reads the bytes as the type says). A pool of a channels-last x whose result does
// not qualify writes NCHW. Steps run by generated kernels instead (emulated GPU blocks) read
// NCHW: the caller asks for none then.
#pragma once

#include <unordered_set>

#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc {

std::unordered_set<const Value*> channelsLastValues(const Graph& graph, const KernelSteps& steps);

// The residual a Conv step's epilogue adds, where it has exactly one add; else null.
const Value* epilogueResidual(const KernelStep& step);

}  // namespace gxc
