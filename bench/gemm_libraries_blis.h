// BLIS for gemm_libraries_bench, in a file of its own: blis.h brings BLIS's own cblas.h, whose
// declarations clash with OpenBLAS's. Built without BLIS (CMake did not find it), haveBlis()
// is false and the bench measures oneDNN and OpenBLAS only.
#pragma once

#include <cstdint>
#include <string>

namespace gxc::bench {

bool haveBlis();
// BLIS's sub-configuration for this CPU and its threads, set to `threads`; or why there is none.
std::string blisDescription(int threads);
// c[m, n] = a[m, k] x w[n, k]^T, all row-major, by bli_sgemm. Requires haveBlis().
void blisSgemmTransB(int64_t m, int64_t n, int64_t k, const float* a, const float* w, float* c);

}  // namespace gxc::bench
