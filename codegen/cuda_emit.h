// Internal to codegen: the pieces every family of generated kernels is written with (C types
// of dtypes, literals, index arithmetic with baked shapes, the elementwise expression of an
// op, the kernel's argument pointers) and the families themselves, one file each:
// cuda_source_elementwise.cpp (elementwise chains, GEMM epilogues), cuda_source_rows.cpp
// (reductions, softmax, the normalizations of cuda_source_norm.cpp, each with its elementwise
// prologue and tail), cuda_source_movement.cpp (transpose, slice, concat, embedding, expand,
// triu, tril), cuda_source_indexing.cpp (gather, index_select, one_hot, pad, repeat, cumsum),
// cuda_source_loss.cpp (the losses), cuda_source_attention.cpp, cuda_source_conv.cpp
// (conv2d), cuda_source_pool.cpp (max_pool2d, avg_pool2d, adaptive_avg_pool2d) and
// cuda_source_topk.cpp (topk, topk_indices). Only cuda_source.cpp calls the families.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/cuda_source.h"
#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc::cuda {

// One kernel's text before it is named: `body` goes between the braces of
// extern "C" __global__ void NAME(GxcArgs args).
struct KernelBody {
  std::string family;  // part of the name: "add", "softmax_mul", ...
  std::string body;
  LaunchShape gpu;
  LaunchShape host;
};

// The arguments of a kernel: p[0] the output, p[1 + i] inputs[i].
struct KernelArgs {
  const Value* output = nullptr;
  std::vector<const Value*> inputs;
  int indexOf(const Value* value) const;  // 1 + position in inputs; a gxc bug if absent
};

constexpr int64_t kGpuBlock = 256;  // threads per block on GPUs: a multiple of the warp
constexpr int64_t kGpuMaxGrid = 65535;
// On the host, blocks run in parallel on the cores (gxc_host_launch). A block should carry at
// least kHostBlockWork units of work, an element of a memory-bound kernel being one unit and
// each math function it calls (exp, tanh, erf, ...) kHostMathWork more: below that, handing
// a block to another core costs more than it saves, the more so as that core must first fetch
// the operands the producing core just wrote (measured: a bias and relu over 65,536 floats
// ran 20 times slower on two cores than on one). kHostMaxGrid blocks leave room to balance
// many cores.
constexpr int64_t kHostBlockWork = 131072;
constexpr int64_t kHostMathWork = 16;
// From this much work on (elements x elementWork), an elementwise kernel's loop is vectorized
// on the host (GXC_GRID_STRIDE_SIMD). Below, the few microseconds it would save never repay
// what vectorizing costs the host build: the small models' training graphs, all small loops,
// took half again as long to build. A loop that calls math functions (erff, expf, ...) weighs
// elementWork per element: 1,024 elements of a gelu are vectorized, each call computing 16
// lanes; left scalar, gpt_decoder's small gelus made it a third slower.
constexpr int64_t kHostSimdElements = 16384;
// The shortest run of an elementwise loop split into runs (InnerRuns) on the host: one vector
// of AVX-512's sixteen floats; a shorter run would leave its lanes empty.
constexpr int64_t kHostSimdRun = 16;
constexpr int64_t kHostMaxGrid = 256;

// "float", "double", "unsigned short" (f16, bf16), "int", "long long", "unsigned char" (bool)
std::string storageType(DType dtype);
// The C type a value of `dtype` is computed in: "float" (f32, f16, bf16), "double",
// "gxc_i64" (i32, i64), "bool".
std::string computeType(DType dtype);
// "add_relu": the ops of a kernel, for its name (shortened past four ops).
std::string familyName(const std::vector<const Op*>& ops);
// The C type that holds one element's bits for bit-exact moves, by element size.
std::string bitsType(DType dtype);
// Loads and stores of a value of any dtype, in its compute type (f32 for f32, f16 and bf16;
// double for f64; gxc_i64 for the integers; bool).
std::string loadElement(DType dtype, const std::string& pointer, const std::string& index);
std::string storeElement(DType dtype, const std::string& pointer, const std::string& index,
                         const std::string& value);
std::string floatLiteral(float value);    // "1.5f", "-0x1p-3f" ...; nan and inf through bits
std::string doubleLiteral(double value);  // "0x1.8p+0", exact; nan and inf through bits
std::string intLiteral(int64_t value);    // "12LL"

// Declarations of the output `out` and the inputs `in1`, `in2`, ... with their C types, as
// `bits` (bitsType) or as stored values (storageType).
std::string pointerDecls(const KernelArgs& args, bool bits = false);

std::vector<int64_t> rowMajorStrides(const Shape& shape);

// The C type of a loop's coordinates and the flat indices made of them: gxc_i64, or int in a
// loop whose index is an int (GXC_GRID_STRIDE_SIMD32, under 2^31 elements, so every index of
// its tensors is too). The host's compiler vectorizes a gather at int indices, and leaves one
// at 64-bit indices scalar: a mask added to attention's scores took 2 ns an element so.
enum class IndexType { I64, Int };
std::string indexLiteral(int64_t value, IndexType type);  // "12LL", or "12" for an int

// Statements setting `prefix`0 .. `prefix`(rank-1) to the coordinates of flat `index` in
// `shape` (index itself is not changed); only the coordinates that `user` (the code that
// reads them) names, so that neither compiler warns of an unused one, and none before
// `fromDim` (an enclosing loop declares those); in `type`.
std::string unravel(const std::string& index, const Shape& shape, const std::string& prefix,
                    const std::string& indent, const std::string& user, size_t fromDim = 0,
                    IndexType type = IndexType::I64);
// The flat index into a tensor of `shape` of the element that NumPy broadcasting pairs with
// coordinates `prefix`0.. of `outShape`, in `type`.
std::string broadcastIndex(const Shape& shape, const Shape& outShape, const std::string& prefix,
                           IndexType type = IndexType::I64);
// Whether `shape`, broadcast into `outShape`, is 1 in outShape's first `outerDims` dims and
// outShape's own in the rest: its flat index is then the offset in a run of those (InnerRuns).
bool spansInnerDims(const Shape& shape, const Shape& outShape, size_t outerDims);
// Whether `shape`, broadcast into `outShape`, is 1 in every dim from `outerDims` on: one
// element of it serves a whole run of those.
bool fixedOverInnerDims(const Shape& shape, const Shape& outShape, size_t outerDims);

// The expression of elementwise `op` applied to `operands` (expressions in the compute types
// of the operands' dtypes), in the compute type of its result's dtype.
std::string elementwiseExpr(const Op& op, const std::vector<std::string>& operands);
// The same for the ops of any dtype (isElementwiseAnyDType): cuda_emit_logic.cpp.
std::string anyDTypeExpr(const Op& op, const std::vector<std::string>& operands);
// The same for the arithmetic ops on i32 and i64: cuda_emit_integer.cpp.
std::string integerExpr(const Op& op, const std::vector<std::string>& operands);

// Statements that compute the elementwise `members` at the element `rootIndex` of `root`
// (of a shape every member broadcasts into), and the expression of root's value there (in
// the compute type of root's dtype).
// Values in `given` are known expressions (an anchor's value); other values read from outside
// are loaded from their argument, broadcast. `prefix` starts every name the statements
// declare, so that two evaluations at different indices can share a scope. With no members,
// `root` is given or an input, loaded at the index.
struct ElementwiseCode {
  std::string statements;
  std::string value;
};
// In an elementwise loop split into runs (cuda_source_elementwise.cpp), `runs` says which: the
// enclosing loop declares the coordinates `prefix`c0 .. of the root's first `outerDims` dims,
// and `innerIndex` counts the elements of one run over the rest. An operand read other than
// at rootIndex must then vary in none of the inner dims (it is read at outer coordinates) or
// be the root's shape in exactly those (it is read at innerIndex). outerDims 0: no runs.
// `indexType`: the type of the coordinates the tail computes from rootIndex itself.
struct InnerRuns {
  size_t outerDims = 0;
  std::string innerIndex;
  IndexType indexType = IndexType::I64;
};
ElementwiseCode elementwiseValue(const std::vector<const Op*>& members, const Value* root,
                                 const KernelArgs& args,
                                 const std::map<const Value*, std::string>& given,
                                 const std::string& rootIndex, const std::string& indent,
                                 const std::string& prefix, const InnerRuns& runs = {});

// Statements that compute the elementwise `members` at the element `rootIndex` of the last
// member's result and store it to `out`. Values in `given` are known expressions (an anchor's
// value); other values read from outside are loaded from their argument, broadcast. With no
// members, `root` (in `given`) is stored as it is.
std::string elementwiseTail(const std::vector<const Op*>& members, const Value* root,
                            const KernelArgs& args,
                            const std::map<const Value*, std::string>& given,
                            const std::string& rootIndex, const std::string& indent,
                            const InnerRuns& runs = {});

// A grid-stride loop over `count` elements: `index` takes every value once across the grid
// (GXC_GRID_STRIDE of gxc_kernel.h: strided on GPUs, one contiguous chunk per block on the
// host; `simd`, for large elementwise loops: vectorized on the host too). Its
// iterations must be independent: the host runs the chunks in parallel.
std::string gridStrideLoop(const std::string& index, int64_t count, const std::string& indent,
                           bool simd = false);
// The type of that loop's index: int for a `simd` loop under 2^31 elements (_SIMD32).
IndexType gridStrideIndexType(int64_t count, bool simd);
LaunchShape gpuElementwiseLaunch(int64_t count);
LaunchShape gpuRowLaunch(int64_t rows, int64_t rowLength);
// The host's launch of a grid-stride loop over `count` independent elements of
// `workPerElement` units each (elementWork): blocks of at least kHostBlockWork units.
LaunchShape hostElementwiseLaunch(int64_t count, int64_t workPerElement = 1);
// The work units of one element of the fused `members`: one, plus kHostMathWork for each
// member that calls a math function.
int64_t elementWork(const std::vector<const Op*>& members);
// The host's launch of a kernel with one block per row: every row its own block when the
// kernel is worth spreading over the cores (`rows` x `rowLength` elements of work), one
// block (which loops over the rows) when it is not.
LaunchShape hostRowLaunch(int64_t rows, int64_t rowLength);

// Row kernels (cuda_source_rows.cpp). How the anchor reads its input, per row: set up once
// per row (`rowSetup`), then the flat index of the row's element `k` (`elementIndex`), for k
// in [0, length).
struct RowLayout {
  int64_t rows = 0;
  int64_t length = 0;
  std::string rowSetup;
  std::string elementIndex;  // an expression of `row` (through rowSetup) and `k`
};
// A loop of the block's threads over the row's elements, reading x (the prologue, evaluated at
// the flat index `at`, then its value) at each.
std::string rowLoop(const RowLayout& layout, const ElementwiseCode& x,
                    const std::string& statement);
// The same loop adding into the double `sum` only: on the host a vectorized reduction
// (GXC_SUM_LOOP: the lanes' partial sums added at the end, as the GPU's threads' are; with
// layer_norm's alone, gpt_decoder at batch 16 took 0.84 ms on one thread instead of 0.88), on
// GPUs the plain loop.
std::string rowSumLoop(const RowLayout& layout, const ElementwiseCode& x,
                       const std::string& statement, const std::string& sum);
// What a normalization anchor (layer_norm, rms_norm, group_norm; cuda_source_norm.cpp)
// computes per row: `stats`, statements after the row setup, then `anchorValue`, the f32 (f64:
// double) value at element k of the row, an expression of the row's x there (`xk`), `k` and `at`.
struct RowStats {
  RowLayout layout;
  std::string stats;
  std::string anchorValue;
};
RowStats normRowStats(const Op& anchor, const ElementwiseCode& x, const KernelArgs& args);

// The families.
KernelBody elementwiseKernel(const KernelStep& step, const KernelArgs& args);
KernelBody epilogueKernel(const KernelStep& step, const KernelArgs& args);
// `anchor` is the step's one row op; its other members are elementwise.
KernelBody rowKernel(const KernelStep& step, const Op& anchor, const KernelArgs& args);
KernelBody movementKernel(const Op& op, const KernelArgs& args);
KernelBody indexingKernel(const Op& op, const KernelArgs& args);  // cuda_source_indexing.cpp
KernelBody lossKernel(const Op& op, const KernelArgs& args);
KernelBody attentionKernel(const Op& op, const KernelArgs& args);  // cuda_source_attention.cpp
KernelBody convKernel(const Op& op, const KernelArgs& args);       // conv2d, conv_transpose2d
KernelBody poolKernel(const Op& op, const KernelArgs& args);       // the 2-d pools, their backward
KernelBody topkKernel(const Op& op, const KernelArgs& args);       // topk, topk_indices

}  // namespace gxc::cuda
