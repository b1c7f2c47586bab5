// --arch spellings: every build parses them the same way (codegen/gpu_arch.h).
#include <gtest/gtest.h>

#include "codegen/gpu_arch.h"
#include "ir/diagnostic.h"

namespace gxc {
namespace {

TEST(GpuArchTest, ParsesSmNumbersAndTheArchSpecificVariant) {
  GpuArch sm80 = parseGpuArch("sm_80");
  EXPECT_EQ(sm80.number(), 80);
  EXPECT_EQ(sm80.str(), "sm_80");
  EXPECT_EQ(sm80.virtualArch(), "compute_80");
  GpuArch sm90a = parseGpuArch("sm_90a");
  EXPECT_EQ(sm90a.str(), "sm_90a");
  EXPECT_EQ(sm90a.virtualArch(), "compute_90a");
  EXPECT_EQ(parseGpuArch("sm_120").number(), 120);
  EXPECT_EQ(defaultGpuArch().str(), "sm_90");
}

// PTX runs on its own compute capability and newer ones (the driver compiles it there);
// an `a` variant only on its own.
TEST(GpuArchTest, CodeForAnArchRunsOnItsCapabilityAndNewerOnes) {
  auto runs = [](const char* arch, int major, int minor) {
    return archRunsOn(parseGpuArch(arch), GpuArch{major, minor, ""});
  };
  EXPECT_TRUE(runs("sm_80", 8, 0));
  EXPECT_TRUE(runs("sm_80", 9, 0));
  EXPECT_TRUE(runs("sm_75", 12, 0));
  EXPECT_TRUE(runs("sm_86", 8, 9));
  EXPECT_FALSE(runs("sm_90", 8, 0));
  EXPECT_FALSE(runs("sm_89", 8, 6));
  EXPECT_FALSE(runs("sm_120", 10, 0));
  EXPECT_TRUE(runs("sm_90a", 9, 0));
  EXPECT_FALSE(runs("sm_90a", 10, 0));
  EXPECT_FALSE(runs("sm_90a", 8, 0));
}

TEST(GpuArchTest, MalformedArchitecturesAreUsageErrors) {
  for (const char* text : {"", "90", "sm90", "sm_", "sm_9", "sm_0x", "sm_1000", "compute_90",
                           "sm_90b", "sm_-90", "SM_90", "sm_09"}) {
    try {
      parseGpuArch(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Usage) << text;
      EXPECT_EQ(error.message(),
                fmt::format("--arch {}: expected sm_XY such as sm_80 or sm_90 (sm_90a for its "
                            "own variant)",
                            text));
    }
  }
}

}  // namespace
}  // namespace gxc
