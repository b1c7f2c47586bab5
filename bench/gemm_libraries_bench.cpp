// The f32 GEMMs of the host's bench models in each GEMM library on this machine: oneDNN's
// matmul primitive with its weights in the layout it prefers (as runtime/host/onednn_matmul.cpp
// packs them once), OpenBLAS's cblas_sgemm, and BLIS's bli_sgemm where CMake found BLIS.
// docs/performance.md cites it where it says why gxc's f32 GEMMs are oneDNN's.
//
//   gemm_libraries_bench [SECONDS]   (default 0.3 per library and shape; set OMP_NUM_THREADS)
//
// Each GEMM is a linear layer's: C[M, N] = A[M, K] x W[N, K]^T, W as a PyTorch state_dict
// holds it, no bias and no post-op (a bias is a post-op in oneDNN and a second pass in the
// others). Prints, per shape and library, the median microseconds of a call and its rate.
#include <dlfcn.h>
#include <omp.h>

#include <cblas.h>
#include <dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/gemm_libraries_blis.h"
#include "bench/median_micros.h"

namespace {

using dnnl::memory;
using gxc::bench::medianMicros;

struct Shape {
  const char* where;
  int64_t m, n, k;
};

// The transformer block (width 512, MLP 2048) at batch 8 x seq 128, the wide MLP at batch 256,
// and gpt_decoder's (width 32, MLP 128) at batch 16 x seq 16.
constexpr Shape kShapes[] = {
    {"transformer q/k/v/out", 1024, 512, 512}, {"transformer fc1", 1024, 2048, 512},
    {"transformer fc2", 1024, 512, 2048},      {"wide MLP fc1", 256, 4096, 1024},
    {"wide MLP fc2", 256, 4096, 4096},         {"wide MLP fc3", 256, 1024, 4096},
    {"gpt_decoder fc1", 256, 128, 32},         {"gpt_decoder fc2", 256, 32, 128},
};

// Enough calls for about `seconds` at 100 GFLOP/s, at least 10.
int callsFor(const Shape& s, double seconds) {
  const double flop = 2.0 * static_cast<double>(s.m * s.n * s.k);
  return std::clamp(static_cast<int>(seconds * 1e11 / flop), 10, 100000);
}

void report(const Shape& s, const char* library, double micros) {
  const double gflops = 2.0 * static_cast<double>(s.m * s.n * s.k) / (micros * 1e3);
  std::printf("%-22s %5lld %5lld %5lld  %-10s %10.2f %8.1f\n", s.where, static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k), library, micros, gflops);
}

double oneDnnMicros(const Shape& s, const float* a, const float* w, float* c, int calls) {
  const auto f32 = memory::data_type::f32;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::desc aDesc({s.m, s.k}, f32, memory::format_tag::ab);
  const memory::desc plainW({s.k, s.n}, f32, memory::format_tag::ba);  // W^T, read from [N, K]
  const memory::desc anyW({s.k, s.n}, f32, memory::format_tag::any);
  const memory::desc cDesc({s.m, s.n}, f32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aDesc, anyW, cDesc), engine);
  dnnl::matmul matmul(pd);
  memory plain(plainW, engine, const_cast<float*>(w)), packed(pd.weights_desc(), engine);
  dnnl::reorder(plain, packed).execute(stream, plain, packed);  // once, as gxc packs weights
  memory ma(aDesc, engine, const_cast<float*>(a)), mc(cDesc, engine, c);
  return medianMicros(calls, [&] {
    matmul.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, mc}});
    stream.wait();
  });
}

double openBlasMicros(const Shape& s, const float* a, const float* w, float* c, int calls) {
  return medianMicros(calls, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.m),
                static_cast<int>(s.n), static_cast<int>(s.k), 1.0f, a, static_cast<int>(s.k), w,
                static_cast<int>(s.k), 0.0f, c, static_cast<int>(s.n));
  });
}

// Whether `library`'s product is oneDNN's, to 1e-4 of the largest magnitude: a faster library
// that computed something else is no result.
bool agree(const std::vector<float>& oneDnns, const std::vector<float>& c, const char* library) {
  float largest = 0.0f, worst = 0.0f;
  for (size_t i = 0; i < c.size(); ++i) {
    largest = std::max(largest, std::abs(oneDnns[i]));
    worst = std::max(worst, std::abs(oneDnns[i] - c[i]));
  }
  if (worst <= 1e-4f * largest) return true;
  std::fprintf(stderr, "%s's product differs from oneDNN's by %g (largest magnitude %g)\n", library,
               static_cast<double>(worst), static_cast<double>(largest));
  return false;
}

// The file that defines the cblas_sgemm this program calls: BLIS exports one too, and the
// table is only OpenBLAS's if the dynamic linker bound it to OpenBLAS.
std::string cblasProvider() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) && info.dli_fname ? info.dli_fname
                                                                                : "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int threads = omp_get_max_threads();
  std::printf("threads %d; oneDNN %d.%d; cblas_sgemm from %s; BLIS: %s\n", threads,
              dnnl_version()->major, dnnl_version()->minor, cblasProvider().c_str(),
              gxc::bench::blisDescription(threads).c_str());
  std::printf("%-22s %5s %5s %5s  %-10s %10s %8s\n", "GEMM", "M", "N", "K", "library", "median us",
              "GFLOP/s");
  for (const Shape& s : kShapes) {
    std::vector<float> a(s.m * s.k, 0.5f), w(s.n * s.k, 0.25f), c(s.m * s.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) * 0.125f - 0.75f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.0625f - 0.1875f;
    const int calls = callsFor(s, seconds);
    report(s, "oneDNN", oneDnnMicros(s, a.data(), w.data(), c.data(), calls));
    const std::vector<float> oneDnns = c;
    std::fill(c.begin(), c.end(), 0.0f);
    report(s, "OpenBLAS", openBlasMicros(s, a.data(), w.data(), c.data(), calls));
    if (!agree(oneDnns, c, "OpenBLAS")) return 1;
    if (gxc::bench::haveBlis()) {
      std::fill(c.begin(), c.end(), 0.0f);
      report(s, "BLIS", medianMicros(calls, [&] {
               gxc::bench::blisSgemmTransB(s.m, s.n, s.k, a.data(), w.data(), c.data());
             }));
      if (!agree(oneDnns, c, "BLIS")) return 1;
    }
  }
  return 0;
}
