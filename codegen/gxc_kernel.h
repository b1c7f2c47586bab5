// gxc_kernel.h: the one header of gxc's generated CUDA C++, for both of its compilers.
//
// Codegen writes every kernel once, as CUDA C++ that includes only this header. NVRTC
// compiles it for GPUs (it defines __CUDACC__ and __CUDACC_RTC__): the real grid, warp
// shuffles and shared memory. The host C++ compiler compiles the very same text for the
// `cpu` and `sim` platforms: this header then maps the grid onto loops (gxc_host_launch runs
// every block as one thread, so blockDim is 1, the blocks spread over OpenMP's threads) and
// the cooperation primitives become the identity. Defining GXC_EMULATE_BLOCKS instead runs the
// GPU's code paths on the host, every thread of each block emulated (gxc_kernel_emulation.h, the
// header's third part). Kernel bodies are written for any blockDim (grid-stride loops,
// GXC_GRID_STRIDE: strided on GPUs, one contiguous chunk per block on the host; one block per row
// for row kernels), so they stay identical on both sides.
//
// The kernel ABI is uniform: extern "C" __global__ void NAME(GxcArgs args), args.p[0] the
// output and then the kernel's inputs in order; shapes, strides and constants are baked into
// each kernel's text. f16 and bf16 are stored as 16-bit integers and converted here, round to
// nearest even, with the same bit arithmetic on both sides; arithmetic is f32, accumulation
// double. This file is embedded into the gxc library; it includes nothing on the GPU side,
// and its second part, gxc_kernel_numbers.h, is spliced in by the build where it is named.
#ifndef GXC_KERNEL_H
#define GXC_KERNEL_H

#define GXC_MAX_ARGS 64

typedef long long gxc_i64;
typedef unsigned long long gxc_u64;

struct GxcArgs {
  void* p[GXC_MAX_ARGS];
};

#ifndef __CUDACC__
// The host compilers' bit casts, where NVRTC has __float_as_uint and __uint_as_float.
static inline unsigned gxc_float_bits(float x) {
  unsigned bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  return bits;
}
static inline float gxc_bits_float(unsigned bits) {
  float x;
  __builtin_memcpy(&x, &bits, sizeof x);
  return x;
}
#endif

#if defined(__CUDACC__) || defined(GXC_EMULATE_BLOCKS)

#ifdef __CUDACC__
#define GXC_FN static __device__ __forceinline__

GXC_FN unsigned gxc_float_bits(float x) { return __float_as_uint(x); }
GXC_FN float gxc_bits_float(unsigned bits) { return __uint_as_float(bits); }
#else  // the host compiler, running GPU launches thread by thread (--emulate-gpu-blocks)
#include "gxc_kernel_emulation.h"
#endif

// A grid-stride loop: thread t of the grid takes elements t, t + the grid's threads, ...
// (GXC_GRID_STRIDE_SIMD and GXC_GRID_STRIDE_SIMD32 are the same loop: the host vectorizes them.)
#define GXC_GRID_STRIDE(i, n)                                               \
  for (gxc_i64 i = (gxc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (gxc_i64)blockDim.x * gridDim.x)
#define GXC_GRID_STRIDE_SIMD(i, n) GXC_GRID_STRIDE(i, n)
#define GXC_GRID_STRIDE_SIMD32(i, n) GXC_GRID_STRIDE(i, n)
// An elementwise loop in runs (codegen's InnerRuns): GXC_RUNS takes `runs` runs of `run`
// elements, `o` the run, GXC_RUN(j, run) the element's offset `j` in it. On GPUs one loop over
// all the elements as GXC_GRID_STRIDE, each thread finding o and j of its own; GXC_RUN and
// GXC_RUN_SCALAR are empty.
#define GXC_RUNS(o, j, runs, run)                                                              \
  for (gxc_i64 gxc_e = (gxc_i64)blockIdx.x * blockDim.x + threadIdx.x; gxc_e < (runs) * (run); \
       gxc_e += (gxc_i64)blockDim.x * gridDim.x)                                               \
    for (gxc_i64 o = gxc_e / (run), j = gxc_e % (run), gxc_once = 1; gxc_once; gxc_once = 0)
#define GXC_RUN(j, run)
#define GXC_RUN_SCALAR(j, run)
// Precedes a loop that only adds into `v` (a row's sum): on GPUs each thread's loop is short
// and the block sums the threads' partials; nothing to say.
#define GXC_SUM_LOOP(v)

// Block-wide sum and max: every thread passes its partial value and gets the block's. Warp
// shuffles, then one value per warp through shared memory; blockDim is a multiple of 32.
GXC_FN double gxc_block_sum(double v) {
  __shared__ double partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  __syncthreads();  // the previous call's readers are done with `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31u) / 32u ? partial[lane] : 0.0;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

GXC_FN float gxc_max(float a, float b) { return (a > b || a != a) ? a : b; }
GXC_FN double gxc_max(double a, double b) { return (a > b || a != a) ? a : b; }

// For float and double (f64's row kernels compute in double).
template <typename T>
GXC_FN T gxc_block_max(T v) {
  __shared__ T partial[32];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = gxc_max(v, __shfl_down_sync(0xffffffffu, v, offset));
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31u) / 32u ? partial[lane] : (T)gxc_bits_float(0xff800000u);
    for (int offset = 16; offset > 0; offset >>= 1)
      v = gxc_max(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

GXC_FN float gxc_min(float a, float b) { return (a < b || a != a) ? a : b; }
GXC_FN double gxc_min(double a, double b) { return (a < b || a != a) ? a : b; }

template <typename T>
GXC_FN T gxc_block_min(T v) {
  return -gxc_block_max(-v);
}

// Block-wide product, as gxc_block_sum sums.
GXC_FN double gxc_block_prod(double v) {
  __shared__ double partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) v *= __shfl_down_sync(0xffffffffu, v, offset);
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31u) / 32u ? partial[lane] : 1.0;
    for (int offset = 16; offset > 0; offset >>= 1) v *= __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

// Warp-wide max and sum: every lane of a full warp passes its value and gets the warp's. For
// float and double.
template <typename T>
GXC_FN T gxc_warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = gxc_max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
template <typename T>
GXC_FN T gxc_warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
GXC_FN bool gxc_arg_better(T bv, gxc_i64 bi, T av, gxc_i64 ai, bool largest);
GXC_FN gxc_i64 gxc_fold_i64(gxc_i64 a, gxc_i64 b, int kind);
GXC_FN gxc_i64 gxc_fold_i64_identity(int kind);

// Block-wide integer sum, product, max or min (gxc_fold_i64's kind), as gxc_block_prod.
GXC_FN gxc_i64 gxc_block_fold_i64(gxc_i64 v, int kind) {
  __shared__ gxc_i64 partial[32];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = gxc_fold_i64(v, __shfl_down_sync(0xffffffffu, v, offset), kind);
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31u) / 32u ? partial[lane] : gxc_fold_i64_identity(kind);
    for (int offset = 16; offset > 0; offset >>= 1)
      v = gxc_fold_i64(v, __shfl_down_sync(0xffffffffu, v, offset), kind);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

// Block-wide argmax (largest) or argmin: every thread passes its best value and its index
// (-1: none) and gets the block's index. For float and double.
template <typename T>
GXC_FN gxc_i64 gxc_block_arg(T v, gxc_i64 i, bool largest) {
  __shared__ T values[32];
  __shared__ gxc_i64 indices[32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    T ov = __shfl_down_sync(0xffffffffu, v, offset);
    gxc_i64 oi = __shfl_down_sync(0xffffffffu, i, offset);
    if (gxc_arg_better(ov, oi, v, i, largest)) v = ov, i = oi;
  }
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) values[warp] = v, indices[warp] = i;
  __syncthreads();
  if (warp == 0) {
    bool has = lane < (blockDim.x + 31u) / 32u;
    v = has ? values[lane] : (T)0;
    i = has ? indices[lane] : -1;
    for (int offset = 16; offset > 0; offset >>= 1) {
      T ov = __shfl_down_sync(0xffffffffu, v, offset);
      gxc_i64 oi = __shfl_down_sync(0xffffffffu, i, offset);
      if (gxc_arg_better(ov, oi, v, i, largest)) v = ov, i = oi;
    }
    if (lane == 0) indices[0] = i;
  }
  __syncthreads();
  return indices[0];
}

#else  // the host C++ compiler, one thread per block

#define __global__
#define __device__
#define __forceinline__ inline
// A block is one call of the kernel function on one thread: its shared memory is a local.
#define __shared__
#define GXC_FN static inline

// The C math library, declared rather than included: the host build of a graph's kernels
// then parses nothing but this header, which keeps each compile short. The f32 functions that
// glibc's vector math library (libmvec) also has are declared `simd`, as glibc's own math.h
// declares them under -ffast-math: a loop that calls them then vectorizes, each call computing
// 16 lanes at once (within glibc's documented 4 ulp), where one call per element took a third
// of a transformer block's generated-kernel time.
extern "C" {
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
float tanhf(float);
float sqrtf(float);
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
float expm1f(float);
#pragma omp declare simd notinbranch
float log1pf(float);
float fabsf(float);
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
float cosf(float);
float floorf(float);
float ceilf(float);
float rintf(float);
float powf(float, float);
double exp(double);
double log(double);
double sqrt(double);
double tanh(double);
double erf(double);
double expm1(double);
double log1p(double);
double fabs(double);
double sin(double);
double cos(double);
double floor(double);
double ceil(double);
double rint(double);
double pow(double, double);
}

struct gxc_dim3 {
  unsigned x, y, z;
};
// Per thread: the sim platform runs streams, and so kernels, on several host threads at once.
static thread_local gxc_dim3 blockIdx = {0, 0, 0};
static thread_local gxc_dim3 gridDim = {1, 1, 1};
static const gxc_dim3 threadIdx = {0, 0, 0};
static const gxc_dim3 blockDim = {1, 1, 1};

GXC_FN void __syncthreads() {}

GXC_FN float gxc_max(float a, float b) { return (a > b || a != a) ? a : b; }
GXC_FN double gxc_max(double a, double b) { return (a > b || a != a) ? a : b; }
GXC_FN float gxc_min(float a, float b) { return (a < b || a != a) ? a : b; }
GXC_FN double gxc_min(double a, double b) { return (a < b || a != a) ? a : b; }
// One thread per block: its value is the block's. For float and double.
GXC_FN double gxc_block_sum(double v) { return v; }
template <typename T>
GXC_FN T gxc_block_max(T v) {
  return v;
}
template <typename T>
GXC_FN T gxc_block_min(T v) {
  return v;
}
GXC_FN double gxc_block_prod(double v) { return v; }
template <typename T>
GXC_FN gxc_i64 gxc_block_arg(T, gxc_i64 i, bool) {
  return i;
}
GXC_FN gxc_i64 gxc_block_fold_i64(gxc_i64 v, int) { return v; }
// A warp of one lane. For float and double.
template <typename T>
GXC_FN T gxc_warp_max(T v) {
  return v;
}
template <typename T>
GXC_FN T gxc_warp_sum(T v) {
  return v;
}

// The grid-stride loop on the host: each block (one thread) takes one contiguous chunk of the
// n elements, the chunks in order and as even as they can be. Contiguous, so that a core
// streams through its own cache lines. GXC_GRID_STRIDE_SIMD, which codegen writes for the
// large elementwise kernels, also vectorizes it (`omp simd`: the iterations are independent, as the
// GPU threads that run them in parallel are), each call of expf, erff, ... computing 16 lanes.
// The other kernels' loops (transposes, gathers, pools) compute indices more than values and
// stay scalar: forcing them too cost host builds time for nothing.
GXC_FN gxc_i64 gxc_chunk_start(gxc_i64 n, gxc_i64 block) {
  gxc_i64 quotient = n / gridDim.x, remainder = n % gridDim.x;
  return quotient * block + (block < remainder ? block : remainder);
}
#define GXC_GRID_STRIDE(i, n)                                           \
  for (gxc_i64 i = gxc_chunk_start((n), blockIdx.x),                    \
               i##_end = gxc_chunk_start((n), (gxc_i64)blockIdx.x + 1); \
       i < i##_end; ++i)
#define GXC_GRID_STRIDE_SIMD(i, n)                                       \
  _Pragma("omp simd") for (gxc_i64 i = gxc_chunk_start((n), blockIdx.x); \
                           i < gxc_chunk_start((n), (gxc_i64)blockIdx.x + 1); ++i)
// The same for n under 2^31, with an int index: GCC vectorizes neither a 64-bit division (the
// coordinates of a broadcast operand, as batch_norm's channel) nor a gather at 64-bit
// indices into floats, but narrows the same expressions of an int back to 32 bits and does.
#define GXC_GRID_STRIDE_SIMD32(i, n)                                      \
  _Pragma("omp simd") for (int i = (int)gxc_chunk_start((n), blockIdx.x); \
                           i < (int)gxc_chunk_start((n), (gxc_i64)blockIdx.x + 1); ++i)
// The runs: each block a contiguous chunk of them, each run one vectorized loop, in which what
// is read at the run's outer coordinates (batch_norm's channel, a bias over the rows) is the
// same for every lane, where the flat loop gathered it lane by lane.
#define GXC_RUNS(o, j, runs, run) GXC_GRID_STRIDE(o, runs)
#define GXC_RUN(j, run) _Pragma("omp simd") for (int j = 0; j < (int)(run); ++j)
// A run left to the compiler's own judgment: a small kernel's, which in runs finds its
// coordinates once per run instead of once per element.
#define GXC_RUN_SCALAR(j, run) for (int j = 0; j < (int)(run); ++j)
// A loop that only adds into `v`, vectorized: each lane a partial sum, added at the end (the
// order differs from one element at a time as a GPU block's threads' partials do).
#define GXC_PRAGMA(x) _Pragma(#x)
#define GXC_SUM_LOOP(v) GXC_PRAGMA(omp simd reduction(+ : v))

// Runs blocks 0 .. grid-1 of `kernel`: a grid of one block on the calling thread, a larger
// one spread over OpenMP's threads (OMP_NUM_THREADS; the pool oneDNN uses too), each thread
// a contiguous range of blocks. Codegen gives a kernel more than one block only when its
// work pays for waking the other threads (kHostBlockWork, codegen/cuda_emit.h).
extern "C" void gxc_host_launch(void (*kernel)(GxcArgs), GxcArgs args, unsigned grid) {
  if (grid == 1) {
    gridDim.x = 1;
    blockIdx.x = 0;
    kernel(args);
    return;
  }
#pragma omp parallel for schedule(static)
  for (gxc_i64 block = 0; block < (gxc_i64)grid; ++block) {
    gridDim.x = grid;
    blockIdx.x = (unsigned)block;
    kernel(args);
  }
}

#endif

#include "gxc_kernel_numbers.h"

#endif  // GXC_KERNEL_H
