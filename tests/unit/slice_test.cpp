// The compiler's `slice` op on the reference interpreter: values known by construction.
#include <gtest/gtest.h>

#include "ir/infer_type.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

TEST(SliceTest, TakesARangeAlongAnAxisBitExactly) {
  Graph graph("g");
  Value* x = graph.addInput("x", TensorType::of(DType::I64, {3, 4}, Device::cpu()));
  Attrs attrs;
  attrs.set("axis", int64_t{-1});
  attrs.set("start", int64_t{1});
  attrs.set("end", int64_t{3});
  Op* op = graph.appendOp(OpKind::Slice, {x}, "s", TensorType{false, DType::F32, {}, Device::cpu()},
                          attrs);
  op->result->type = inferResultType(*op);
  Tensor input(DType::I64, {3, 4});
  for (int64_t i = 0; i < 12; ++i) input.storeInt(i, (int64_t{1} << 60) + i);  // beyond f64
  Tensor result = evaluateReferenceOp(*op, {&input});
  ASSERT_EQ(result.shape(), (Shape{3, 2}));
  std::vector<int64_t> expected = {1, 2, 5, 6, 9, 10};
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(result.loadInt(i), (int64_t{1} << 60) + expected[static_cast<size_t>(i)]);
}

}  // namespace
}  // namespace gxc
