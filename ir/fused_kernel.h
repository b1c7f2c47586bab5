// Fused kernels in the IR: which ops may be members of one, and the rules every kernel keeps.
//
// The pass `fuse` (passes/fuse.h) marks each member of a fused kernel with the attribute
// `kernel` (a string, "k0", "k1", ...). Codegen makes one kernel, or one cuBLASLt call, of
// each kernel's members, and one of every op without the attribute. The rules, which the
// verifier checks (kernelProblems) and codegen relies on:
//   - the members of one kernel are contiguous in the op list and on one device;
//   - one escaping result: only the last member's (the *root*'s) result may be read by ops
//     outside the kernel or be a graph output; every other member's result is read by later
//     members of the same kernel, and only by them, so it is never materialized in memory and
//     every member contributes to the root;
//   - every member has a role (kernelRole) with a floating-point result: *elementwise* (add
//     sub mul div, with a tensor or `scalar` operand and NumPy broadcasting; relu sigmoid
//     tanh exp log neg sqrt gelu; and, with a result of any dtype, the comparisons,
//     logical_and logical_or logical_not, where, masked_fill and cast; batch_norm, whose
//     per-channel operands are read at its dim 1 and are never members: only its first
//     operand may be computed in the kernel), *anchor* (the float
//     reductions of isReduction, softmax log_softmax layer_norm rms_norm group_norm) or *GEMM*
//     (matmul of 2-D operands, transposed or not, or of a row stack and a matrix
//     (isRowStackedMatmul); linear);
//   - at most one anchor. Only its first operand may be computed in the kernel, by the
//     *prologue*: the members it is computed from, which the anchor evaluates wherever it
//     reads its input. The other members, the *tail*, are computed at each element of the
//     root; the root may be larger than the anchor's result, which then broadcasts into it
//     (`x - mean(x, keepdim)`): each anchor element is read by the root elements broadcasting
//     pairs with it, in the block that computed it. A member may be in both: the tail
//     recomputes it at the root's index;
//   - a GEMM may only be the first member, followed by its *epilogue*: a chain of at most
//     kMaxGemmEpilogue members, each reading the member before it once: first, maybe, an `add`
//     of a 1-D bias broadcast over the last dim (matmul only: linear has its own bias); then
//     relu, gelu (either form) and the `add` of a tensor of the GEMM's shape and dtype (a
//     residual) computed outside the kernel. The host applies them all as oneDNN's post-ops
//     while the product is in cache (f32); cuBLASLt applies the chains it has epilogues for
//     (the bias, then relu or gelu's tanh form), and a generated kernel the others, in place on
//     the GEMM's result.
//   - a *convolution* (conv2d) may only be the first member, followed by its *epilogue*: a
//     chain of at most kMaxConvEpilogue members, each reading the member before it once:
//     batch_norm (the chain at its x), relu, clamp (ReLU6: MobileNet's), hardswish
//     (MobileNetV3's), and `add` of a tensor of the chain's own shape and dtype (a residual)
//     computed outside the kernel. These are what the convolution libraries apply before they
//     store (oneDNN's post-ops: per-channel scale and shift, eltwise relu, binary add), so the
//     host runs the whole kernel as one primitive (clamps and hardswishes that end the chain as
//     a pass over the result in whatever layout it is in, which keeps NaN as torch does and
//     oneDNN's clip does not); cuDNN and the generated convolution run the epilogue as a
//     generated kernel on their result.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// Pointers one kernel launch passes: its result, then its inputs (GxcArgs, GXC_MAX_ARGS in
// codegen/gxc_kernel.h). A fused kernel, and a batch-transfers pack, read at most one less.
constexpr int kMaxKernelArgs = 64;

enum class KernelRole { None, Elementwise, Anchor, Gemm, Conv };

// The most members after a convolution, or after a GEMM, in one kernel.
constexpr size_t kMaxConvEpilogue = 8;
constexpr size_t kMaxGemmEpilogue = 4;

// What `op` may be in a fused kernel; None: never a member. Reads the types where known.
KernelRole kernelRole(const Op& op);
// Whether `op` is a matmul of a 3-D a, not transposed, and one 2-D b (ONNX's MatMul of
// [batch, seq, in] activations by [in, out] weights): its batch entries are one GEMM of
// batch x m rows, as a linear's leading dims are, and its result [batch, m, n] is that GEMM's
// row-major product. The host, cuBLASLt and the cost model all run it as one GEMM.
bool isRowStackedMatmul(const Op& op);
// Whether `add` adds a bias to `gemm`'s result as CUBLASLT_EPILOGUE_BIAS does: gemm is a
// matmul, add reads its result and a 1-D value of its last dim and dtype.
bool isGemmBiasAdd(const Op& gemm, const Op& add);
// Whether `op` is an activation cuBLASLt applies in an epilogue: relu, or gelu's tanh form.
bool isGemmActivation(const Op& op);
// Whether `op` may extend a GEMM's epilogue whose last member computes `fed` (a bias add
// aside, which only comes first: isGemmBiasAdd): relu, gelu, or an add of `fed` and a
// tensor of its shape and dtype.
bool isGemmEpilogueMember(const Value* fed, const Op& op);
// What an epilogue's `add` reads beside `fed`, the value the epilogue has computed: a
// residual, or a GEMM's bias.
const Value* residualOf(const Op& add, const Value* fed);
// Whether `op` may extend a convolution's epilogue whose last member computes `fed`:
// batch_norm reading it as x, relu, clamp, hardswish, or an add of it and a tensor of its shape
// and dtype.
bool isConvEpilogueMember(const Value* fed, const Op& op);

// The kernel `op` belongs to, or "" when it is its own kernel.
const std::string& kernelOf(const Op& op);

// One fused kernel: its members are ops()[first] to ops()[last], both included.
struct KernelSpan {
  std::string name;
  size_t first = 0;
  size_t last = 0;
};
// Every kernel of a graph whose kernels are contiguous, in op order.
std::vector<KernelSpan> kernelSpans(const Graph& graph);
// The results of members that are not their kernel's last: values never materialized.
std::unordered_set<const Value*> kernelInternalValues(const Graph& graph);

// Every broken kernel rule, one line each ("op %x: ..."); empty when all hold.
std::vector<std::string> kernelProblems(const Graph& graph);

}  // namespace gxc
