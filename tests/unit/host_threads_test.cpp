// The host's cores: generated kernels spread their blocks over OpenMP's threads
// (gxc_host_launch), a grid-stride loop gives each block one contiguous chunk, and the GEMMs'
// OpenBLAS is the build that shares that one OpenMP pool rather than running its own threads
// beside it.
#include <omp.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/cuda_emit.h"
#include "codegen/host_kernel_library.h"

extern "C" int openblas_get_parallel(void);  // OpenBLAS's: 0 serial, 1 pthreads, 2 OpenMP

namespace gxc {
namespace {

const char* kKernels = R"(#include "gxc_kernel.h"
extern "C" int omp_get_thread_num(void);
// out[block] = the OpenMP thread that ran the block.
extern "C" __global__ void which_thread(GxcArgs args) {
  int* out = (int*)args.p[0];
  out[blockIdx.x] = omp_get_thread_num();
}
// out[i] = the block whose chunk holds element i, of 1000.
extern "C" __global__ void chunk_of(GxcArgs args) {
  int* out = (int*)args.p[0];
  GXC_GRID_STRIDE(i, 1000) { out[i] += 1 + blockIdx.x; }
}
)";

class HostLaunchTest : public testing::Test {
 protected:
  KernelCache cache_ = KernelCache::fromEnvironment();
  HostKernelLibrary library_{kKernels, cache_, false};
};

TEST_F(HostLaunchTest, BlocksRunOnEveryThreadOfThePool) {
  int before = omp_get_max_threads();
  omp_set_num_threads(2);
  std::vector<int> thread(64, -1);
  HostKernelArgs args;
  args.p[0] = thread.data();
  library_.launch(library_.kernel("which_thread"), args, 64);
  omp_set_num_threads(before);
  // Contiguous ranges: blocks 0-31 on thread 0, 32-63 on thread 1.
  for (int block = 0; block < 64; ++block) EXPECT_EQ(thread[block], block / 32) << block;
}

TEST_F(HostLaunchTest, OneBlockRunsOnTheCallingThread) {
  std::vector<int> thread(1, -1);
  HostKernelArgs args;
  args.p[0] = thread.data();
  library_.launch(library_.kernel("which_thread"), args, 1);
  EXPECT_EQ(thread[0], 0);
}

// Seven blocks over 1000 elements: chunks of 143 or 142, in block order, each element once.
TEST_F(HostLaunchTest, GridStrideLoopGivesEachBlockOneContiguousChunk) {
  std::vector<int> block(1000, 0);
  HostKernelArgs args;
  args.p[0] = block.data();
  library_.launch(library_.kernel("chunk_of"), args, 7);
  EXPECT_TRUE(std::is_sorted(block.begin(), block.end()));
  for (int b = 1; b <= 7; ++b) {
    auto count = std::count(block.begin(), block.end(), b);
    EXPECT_TRUE(count == 142 || count == 143) << "block " << b - 1 << ": " << count;
  }
  EXPECT_EQ(std::count(block.begin(), block.end(), 1), 143);  // the remainder goes first
}

TEST(HostLaunchShapeTest, WorkDecidesTheHostGrid) {
  EXPECT_EQ(cuda::hostElementwiseLaunch(100).grid, 1);
  EXPECT_EQ(cuda::hostElementwiseLaunch(cuda::kHostBlockWork * 5).grid, 5);
  EXPECT_EQ(cuda::hostElementwiseLaunch(int64_t{1} << 40).grid, cuda::kHostMaxGrid);
  // A math function weighs kHostMathWork elements: a tanh spreads where a relu does not.
  EXPECT_EQ(cuda::hostElementwiseLaunch(65536, 1).grid, 1);
  EXPECT_EQ(cuda::hostElementwiseLaunch(65536, 1 + cuda::kHostMathWork).grid, 8);
  EXPECT_EQ(cuda::hostRowLaunch(8, 32).grid, 1);  // 256 elements: one block loops the rows
  EXPECT_EQ(cuda::hostRowLaunch(16384, 32).grid, 16384);
  EXPECT_EQ(cuda::hostRowLaunch(1, int64_t{1} << 30).grid, 1);
}

TEST(CpuThreadsTest, OpenBlasSharesOpenMpsThreadPool) {
  EXPECT_EQ(openblas_get_parallel(), 2)
      << "gxc is linked with an OpenBLAS that runs its own threads, which fight OpenMP's for "
         "the cores: install libopenblas-openmp-dev and configure again";
}

}  // namespace
}  // namespace gxc
