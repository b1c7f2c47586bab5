// The f32 arithmetic peak of the machine this runs on, measured rather than assumed: what no
// GEMM, however good, can beat. A virtual machine reports neither its cores' boost clock nor
// how many vector FMAs they issue per cycle (AMD's Zen 4 splits a 512-bit FMA over two 256-bit
// units; Intel's server cores have one or two 512-bit units), so both are measured:
//   - the clock: a chain of dependent integer adds, one per cycle on every x86-64 core;
//   - the FMA rate: independent chains of fused multiply-adds on the widest vectors the CPU
//     has (AVX-512, else AVX2 with FMA), enough chains to cover the FMA latency on any core
//     (12 registers: 4 cycles of latency x 2 units, with room);
// on each number of threads asked for at once (one per core; the clock may be lower when all
// are busy). Each figure is the best of REPEATS runs of about 0.2 s.
//
// Usage: fma_peak_bench [REPEATS [THREADS...]]   (default 5 repeats; 1 thread and every core)
// Prints one CSV line per thread count: threads, GHz, GFLOP/s, FLOP per cycle per core.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

#if defined(__x86_64__)

constexpr int64_t kAddsPerLoop = 8;
constexpr int kChains = 12;

// Seconds of `loops` x kAddsPerLoop dependent adds: as many cycles.
double addChainSeconds(int64_t loops) {
  uint64_t value = 0;
  auto start = Clock::now();
  for (int64_t i = 0; i < loops; ++i)
    asm volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(value));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (value != static_cast<uint64_t>(loops * kAddsPerLoop)) std::abort();
  return seconds;
}

// FLOP of `loops` rounds of kChains independent 512-bit FMAs, and their seconds.
__attribute__((target("avx512f"))) double fma512Seconds(int64_t loops, float* sink) {
  __m512 chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  auto start = Clock::now();
  for (int64_t i = 0; i < loops; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) chains[c] = _mm512_fmadd_ps(chains[c], scale, shift);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  float lanes[16];
  for (int c = 0; c < kChains; ++c) {
    _mm512_storeu_ps(lanes, chains[c]);
    for (float lane : lanes) *sink += lane;
  }
  return seconds;
}

__attribute__((target("avx2,fma"))) double fma256Seconds(int64_t loops, float* sink) {
  __m256 chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  auto start = Clock::now();
  for (int64_t i = 0; i < loops; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) chains[c] = _mm256_fmadd_ps(chains[c], scale, shift);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  float lanes[8];
  for (int c = 0; c < kChains; ++c) {
    _mm256_storeu_ps(lanes, chains[c]);
    for (float lane : lanes) *sink += lane;
  }
  return seconds;
}

// The least of `repeats` runs of `measure` on `threads` threads at once: each thread's own
// seconds, the slowest thread's counting.
double bestSeconds(int threads, int repeats, const std::function<double()>& measure) {
  double best = 1e30;
  for (int r = 0; r < repeats + 1; ++r) {  // the first run warms up
    std::vector<double> seconds(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { seconds[static_cast<size_t>(t)] = measure(); });
    for (std::thread& thread : pool) thread.join();
    if (r > 0) best = std::min(best, *std::max_element(seconds.begin(), seconds.end()));
  }
  return best;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<int> threadCounts;
  for (int i = 2; i < argc; ++i) threadCounts.push_back(std::atoi(argv[i]));
  if (threadCounts.empty())
    threadCounts = cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1};
  bool valid = repeats >= 1;
  for (int threads : threadCounts) valid = valid && threads >= 1;
  if (!valid) {
    std::fprintf(stderr, "usage: fma_peak_bench [REPEATS [THREADS...]]   (each >= 1)\n");
    return 2;
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "fma_peak_bench: this CPU has neither AVX-512 nor AVX2 with FMA\n");
    return 1;
  }
  const int lanes = avx512 ? 16 : 8;
  constexpr int64_t kAddLoops = 100'000'000;  // 8e8 cycles: 0.2 s at 4 GHz
  constexpr int64_t kFmaLoops = 20'000'000;   // 2.4e8 FMAs, 0.1-0.2 s
  std::printf("vector: %s, %d f32 lanes\n", avx512 ? "avx512f" : "avx2 and fma", lanes);
  std::printf("threads,GHz,GFLOP/s,FLOP per cycle per core\n");
  for (int threads : threadCounts) {
    double addSeconds = bestSeconds(threads, repeats, [] { return addChainSeconds(kAddLoops); });
    double ghz = static_cast<double>(kAddLoops * kAddsPerLoop) / addSeconds / 1e9;
    float sink = 0;
    double fmaSeconds = bestSeconds(threads, repeats, [&] {
      float own = 0;
      double seconds = avx512 ? fma512Seconds(kFmaLoops, &own) : fma256Seconds(kFmaLoops, &own);
      if (own == 12345.0f) sink += own;  // keeps the chains' results alive
      return seconds;
    });
    double flop = static_cast<double>(kFmaLoops) * kChains * lanes * 2 * threads;
    double gflops = flop / fmaSeconds / 1e9;
    std::printf("%d,%.2f,%.1f,%.1f\n", threads, ghz, gflops, gflops / threads / ghz);
  }
  return 0;
#else
  (void)cores;
  std::fprintf(stderr, "fma_peak_bench: measures x86-64 CPUs only\n");
  return 1;
#endif
}
