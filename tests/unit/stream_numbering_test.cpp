// StreamNumbering (passes/assign_streams.h), which assign-streams, batch-transfers and
// plan-memory number streams by: numbers in order of first use, one per stream even where ops
// with different devices share it (a device's d2d stream takes copies from every other GPU),
// and each number's name the one streamOf gives.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "passes/assign_streams.h"

namespace gxc {
namespace {

const char* kCopies = R"(graph @g(%x: f32[4] @cpu) -> (back) {
  %up = copy %x : f32[4] @cpu -> @cuda:0
  %a = relu %up : f32[4] @cuda:0
  %from0 = copy %a : f32[4] @cuda:0 -> @cuda:1
  %b = relu %x : f32[4] @cpu
  %up2 = copy %b : f32[4] @cpu -> @cuda:2
  %from2 = copy %up2 : f32[4] @cuda:2 -> @cuda:1
  %sum = add %from0, %from2 : f32[4] @cuda:1
  %back = copy %sum : f32[4] @cuda:1 -> @cpu
  return %back
}
)";

TEST(StreamNumberingTest, NumbersStreamsInOrderOfFirstUseOncePerStream) {
  auto graph = parseGraph(kCopies, "g.gxir");
  StreamNumbering streams;
  std::vector<int> numbers;
  for (const Op* op : graph->ops()) {
    numbers.push_back(streams.numberOf(*op));
    EXPECT_EQ(streams.name(numbers.back()), streamOf(*op)) << op->result->name;
  }
  // up: cuda:0.h2d; a: cuda:0.compute; from0: cuda:1.d2d; b: cpu.compute; up2: cuda:2.h2d;
  // from2: cuda:1.d2d again, from another GPU; sum: cuda:1.compute; back: cuda:1.d2h.
  EXPECT_EQ(numbers, (std::vector<int>{0, 1, 2, 3, 4, 2, 5, 6}));
  EXPECT_EQ(streams.count(), 7);
  EXPECT_EQ(streams.numberOf(std::string("cuda:1.d2d")), 2);
  EXPECT_EQ(streams.numberOf(std::string("cuda:3.compute")), -1);
}

}  // namespace
}  // namespace gxc
