#include "bench/gemm_libraries_blis.h"

#include <cstdlib>

#ifdef GXC_HAVE_BLIS
#include <blis.h>
#endif

namespace gxc::bench {

#ifdef GXC_HAVE_BLIS

bool haveBlis() { return true; }

std::string blisDescription(int threads) {
  bli_thread_set_num_threads(threads);
  return std::string(bli_info_get_version_str()) + ", kernels for " +
         bli_arch_string(bli_arch_query_id()) + ", " +
         std::to_string(bli_thread_get_num_threads()) + " threads";
}

void blisSgemmTransB(int64_t m, int64_t n, int64_t k, const float* a, const float* w, float* c) {
  float one = 1.0f, zero = 0.0f;
  // Row-major: a row stride of the row length, a column stride of 1; W read transposed.
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_TRANSPOSE, m, n, k, &one, const_cast<float*>(a), k, 1,
            const_cast<float*>(w), k, 1, &zero, c, n, 1);
}

#else

bool haveBlis() { return false; }

std::string blisDescription(int) { return "not built in (CMake found no BLIS: libblis-dev)"; }

void blisSgemmTransB(int64_t, int64_t, int64_t, const float*, const float*, float*) {
  std::abort();  // haveBlis() is false
}

#endif

}  // namespace gxc::bench
