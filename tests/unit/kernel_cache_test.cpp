// The on-disk kernel cache: hits, misses, keys, corruption, disabling.
#include "codegen/kernel_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace gxc {
namespace {

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gxc-kernel-cache-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::vector<std::filesystem::path> entries() const {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
      files.push_back(entry.path());
    }
    return files;
  }

  std::filesystem::path directory_;
};

TEST_F(KernelCacheTest, SecondRequestIsReadFromDisk) {
  int builds = 0;
  auto build = [&] {
    ++builds;
    return std::string("payload\0with nul", 16);
  };
  KernelCache first(directory_);
  EXPECT_EQ(first.getOrBuild("ptx", {"source", "sm_90"}, build),
            std::string("payload\0with nul", 16));
  // A new cache object (a new process, as far as the cache knows) finds the entry.
  KernelCache second(directory_);
  EXPECT_EQ(second.getOrBuild("ptx", {"source", "sm_90"}, build),
            std::string("payload\0with nul", 16));
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(first.stats().compiles, 1);
  EXPECT_EQ(second.stats().hits, 1);
  EXPECT_EQ(second.stats().compiles, 0);
  // No temporary file is left behind.
  EXPECT_EQ(entries().size(), 1u);
}

TEST_F(KernelCacheTest, EveryKeyPartMatters) {
  KernelCache cache(directory_);
  int builds = 0;
  auto build = [&] { return std::to_string(++builds); };
  EXPECT_EQ(cache.getOrBuild("ptx", {"source", "sm_90"}, build), "1");
  EXPECT_EQ(cache.getOrBuild("ptx", {"source", "sm_80"}, build), "2");
  EXPECT_EQ(cache.getOrBuild("ptx", {"sourc", "esm_90"}, build), "3");
  EXPECT_EQ(cache.getOrBuild("host-so", {"source", "sm_90"}, build), "4");
  EXPECT_EQ(cache.getOrBuild("ptx", {"source", "sm_90"}, build), "1");
  EXPECT_EQ(cache.stats().hits, 1);
}

TEST_F(KernelCacheTest, CorruptEntryIsRebuilt) {
  KernelCache cache(directory_);
  cache.getOrBuild("ptx", {"k"}, [] { return std::string("good ptx"); });
  ASSERT_EQ(entries().size(), 1u);
  std::filesystem::path file = entries()[0];
  for (std::string damage : {"flip", "truncate", "garbage"}) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string text = bytes.str();
    in.close();
    if (damage == "flip") text[text.find("good")] = 'G';
    if (damage == "truncate") text.resize(text.size() / 2);
    if (damage == "garbage") text = "not a cache entry";
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    KernelCache reader(directory_);
    EXPECT_EQ(reader.getOrBuild("ptx", {"k"}, [] { return std::string("good ptx"); }), "good ptx")
        << damage;
    EXPECT_EQ(reader.stats().corruptEntries, 1) << damage;
    EXPECT_EQ(reader.stats().compiles, 1) << damage;
    // The rebuilt entry is whole again.
    KernelCache again(directory_);
    again.getOrBuild("ptx", {"k"}, [] { return std::string("wrong"); });
    EXPECT_EQ(again.stats().hits, 1) << damage;
  }
}

TEST_F(KernelCacheTest, DisabledCacheAlwaysBuilds) {
  KernelCache cache(std::nullopt);
  int builds = 0;
  auto build = [&] { return std::to_string(++builds); };
  cache.getOrBuild("ptx", {"k"}, build);
  cache.getOrBuild("ptx", {"k"}, build);
  EXPECT_EQ(builds, 2);
  EXPECT_FALSE(cache.enabled());
}

TEST_F(KernelCacheTest, EnvironmentChoosesTheDirectory) {
  // The tests' shared cache (test_kernel_cache.cpp) comes back for the tests after this one.
  const char* shared = std::getenv("GXC_CACHE_DIR");
  std::string sharedDirectory = shared ? shared : "";
  setenv("GXC_CACHE_DIR", directory_.c_str(), 1);
  EXPECT_EQ(KernelCache::fromEnvironment().directory(), directory_);
  setenv("GXC_DISABLE_KERNEL_CACHE", "1", 1);
  EXPECT_FALSE(KernelCache::fromEnvironment().enabled());
  unsetenv("GXC_DISABLE_KERNEL_CACHE");
  setenv("GXC_CACHE_DIR", "", 1);
  EXPECT_FALSE(KernelCache::fromEnvironment().enabled());
  unsetenv("GXC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/somewhere", 1);
  EXPECT_EQ(KernelCache::fromEnvironment().directory(), std::filesystem::path("/somewhere/gxc"));
  unsetenv("XDG_CACHE_HOME");
  if (shared) setenv("GXC_CACHE_DIR", sharedDirectory.c_str(), 1);
}

TEST_F(KernelCacheTest, UnwritableDirectoryStillBuilds) {
  KernelCache cache(std::filesystem::path("/proc/gxc-cannot-write-here"));
  EXPECT_EQ(cache.getOrBuild("ptx", {"k"}, [] { return std::string("built"); }), "built");
  EXPECT_EQ(cache.stats().compiles, 1);
}

}  // namespace
}  // namespace gxc
