// In a build without the CUDA toolkit, tests/unit/cuda_*.cpp are not compiled: they use the
// cuda platform's internals, which need the toolkit's headers and libraries. Each such file is
// registered here as one test that skips, saying why, so that ctest lists it as not run
// instead of leaving it out without a word. tests/CMakeLists.txt passes the file names.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace gxc {
namespace {

class NotBuiltWithoutCuda : public testing::Test {
 public:
  explicit NotBuiltWithoutCuda(std::string file) : file_(std::move(file)) {}
  void TestBody() override {
    GTEST_SKIP() << "tests/unit/" << file_
                 << " needs the CUDA toolkit to compile: this gxc was built without CUDA";
  }

 private:
  std::string file_;
};

// The test name is the file's stem, which gtest accepts: letters, digits and '_'.
const bool registered = [] {
  std::stringstream files(GXC_TESTS_NEEDING_CUDA);
  std::string file;
  while (std::getline(files, file, ',')) {
    if (file.empty()) continue;
    std::string stem = file.substr(0, file.find('.'));
    testing::RegisterTest(
        "NotBuiltWithoutCuda", stem.c_str(), nullptr, nullptr, __FILE__, __LINE__,
        [file]() -> NotBuiltWithoutCuda* { return new NotBuiltWithoutCuda(file); });
  }
  return true;
}();

}  // namespace
}  // namespace gxc
