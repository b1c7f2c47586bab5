// The unit tests build generated kernels through the on-disk kernel cache: one in the build
// tree, shared by every test (ctest sets GXC_CACHE_DIR to it too), so that the binary run by
// hand never writes to the user's cache either. A test that needs another cache sets its own.
#include <cstdlib>

namespace {

const bool kCacheDirectorySet = [] {
  ::setenv("GXC_CACHE_DIR", GXC_TEST_KERNEL_CACHE_DIR, /*overwrite=*/0);
  return true;
}();

}  // namespace
