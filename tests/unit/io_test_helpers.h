// What the .npy, .npz and safetensors tests share: the fixtures make_io_fixtures.py wrote, the
// formulas it filled them with, a scratch folder, and reading back files and errors.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "tests/unit/scratch_dir.h"

namespace gxc::iotest {

// A test with a scratch folder of its own (dir_), removed after it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = makeScratchDir("gxc-io-test"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string writeFile(const std::string& name, const std::string& bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  std::filesystem::path dir_;
};

inline std::string fixture(const std::string& name) {
  return std::string(GXC_FIXTURE_DIR) + "/io/" + name;
}

// The formulas make_io_fixtures.py filled its tensors with.
inline float floatValue(int64_t i) { return static_cast<float>(i - 2) * 0.75f; }
inline int64_t i32Value(int64_t i) { return i * 100000 - 7; }
inline int64_t i64Value(int64_t i) { return (i - 2) * (int64_t{1} << 40) + 3; }

// The text gxc prints for the Model error that `read` throws.
inline std::string modelErrorOf(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    return formatError(e);
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

inline std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace gxc::iotest
