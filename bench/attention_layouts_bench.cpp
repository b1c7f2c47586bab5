// gpt_decoder's attention matmuls in oneDNN, with the heads where gxc's transposes put them or
// read in place: which kernel oneDNN picks for each, and what a call costs. docs/performance.md
// cites it where it says why the host's attention copies its heads rather than reading q, k
// and v strided out of the qkv projection.
//
//   attention_layouts_bench [BATCH] [CALLS]   (default 16 and 2000; set OMP_NUM_THREADS)
//
// The model's shapes: H = 4 heads of E = 8, L = 16 positions, q, k and v side by side in one
// [BATCH, L, 3 H E] projection (GPT-2's c_attn). "heads first" is the layout after the model's
// transposes: each of q, k, v and the context dense as [BATCH H, L, E]. "in place" reads q, k
// and v out of the projection as 4-D tensors [BATCH, H, L, E] with the projection's strides and
// writes the context straight into [BATCH, L, H E], as strided operands in the IR would have the
// attention do. Prints each matmul's implementation and the median microseconds of a call.
#include <dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/median_micros.h"

namespace {

using dnnl::memory;
using Dims = memory::dims;

constexpr int64_t kHeads = 4, kWidth = 8, kPositions = 16;

using gxc::bench::medianMicros;

// Times dst = src x weights, each operand at the address given.
void timeMatmul(const char* what, const memory::desc& src, const memory::desc& weights,
                const memory::desc& dst, float* a, float* b, float* c, int calls) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), engine);
  dnnl::matmul matmul(pd);
  memory ma(src, engine, a), mb(weights, engine, b), mc(dst, engine, c);
  double micros = medianMicros(calls, [&] {
    matmul.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    stream.wait();
  });
  std::printf("%-32s %-22s %8.2f us\n", what, pd.impl_info_str(), micros);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 16;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  const auto f32 = memory::data_type::f32;
  const int64_t B = batch, H = kHeads, L = kPositions, E = kWidth, row = 3 * H * E;
  std::vector<float> qkv(B * L * row, 0.25f), scores(B * H * L * L, 0.5f);
  std::vector<float> q(B * H * L * E, 0.25f), k(q), v(q), context(q.size());
  std::printf("batch %lld, %lld heads of %lld, %lld positions: matmul, oneDNN's kernel, median\n",
              static_cast<long long>(B), static_cast<long long>(H), static_cast<long long>(E),
              static_cast<long long>(L));

  // Heads first: [B H, L, E] dense, k read transposed.
  const memory::desc qDense({B * H, L, E}, f32, Dims{L * E, E, 1});
  const memory::desc kTDense({B * H, E, L}, f32, Dims{L * E, 1, E});
  const memory::desc scoresDense({B * H, L, L}, f32, Dims{L * L, L, 1});
  timeMatmul("q k^T, heads first", qDense, kTDense, scoresDense, q.data(), k.data(), scores.data(),
             calls);
  timeMatmul("p v, heads first", scoresDense, qDense, qDense, scores.data(), v.data(),
             context.data(), calls);

  // In place: q (b, h, l, e) at b L row + l row + h E + e of the projection; k at E H more,
  // v at 2 E H more; the context (b, h, l, e) at b L H E + l H E + h E + e.
  const memory::desc qInPlace({B, H, L, E}, f32, Dims{L * row, E, row, 1});
  const memory::desc kTInPlace({B, H, E, L}, f32, Dims{L * row, E, 1, row});
  const memory::desc scores4({B, H, L, L}, f32, Dims{H * L * L, L * L, L, 1});
  const memory::desc contextInPlace({B, H, L, E}, f32, Dims{L * H * E, E, H * E, 1});
  timeMatmul("q k^T, in place", qInPlace, kTInPlace, scores4, qkv.data(), qkv.data() + H * E,
             scores.data(), calls);
  timeMatmul("p v, in place", scores4, qInPlace, contextInPlace, scores.data(),
             qkv.data() + 2 * H * E, context.data(), calls);
  return 0;
}
