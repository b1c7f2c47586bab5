// Graph's program order under insertion and erasure: the list and the caches built from it
// (ops(), opIndex()) must agree whatever the mix of calls, and what eraseOp promises is
// checked once the rewrite is done.
#include "ir/graph.h"

#include <gtest/gtest.h>

namespace gxc {
namespace {

TensorType f32() { return TensorType::of(DType::F32, {4}, Device::cpu()); }

std::vector<std::string> names(const Graph& graph) {
  std::vector<std::string> result;
  for (const Op* op : graph.ops()) result.push_back(op->layerName());
  return result;
}

// x -> a -> b -> c
struct Chain {
  Graph graph{"g"};
  Value* x = graph.addInput("x", f32());
  Op* a = graph.appendOp(OpKind::Relu, {x}, "a", f32());
  Op* b = graph.appendOp(OpKind::Relu, {a->result}, "b", f32());
  Op* c = graph.appendOp(OpKind::Relu, {b->result}, "c", f32());
};

TEST(GraphTest, InsertionsBeforeAnAnchorKeepTheirOrder) {
  Chain chain;
  Graph& graph = chain.graph;
  EXPECT_EQ(graph.opIndex(chain.c), 2u);  // caches built before the batch of insertions
  graph.insertOpBefore(chain.b, OpKind::Relu, {chain.a->result}, "p", f32());
  Op* q = graph.insertOpBefore(chain.b, OpKind::Relu, {chain.a->result}, "q", f32());
  graph.insertOpBefore(q, OpKind::Relu, {chain.a->result}, "r", f32());  // before a new op
  graph.insertOpBefore(nullptr, OpKind::Relu, {chain.c->result}, "d", f32());
  EXPECT_EQ(names(graph), (std::vector<std::string>{"a", "p", "r", "q", "b", "c", "d"}));
  EXPECT_EQ(graph.opIndex(chain.c), 5u);
  EXPECT_EQ(graph.opIndex(q), 3u);
  EXPECT_EQ(graph.nextOp(chain.a)->layerName(), "p");
  EXPECT_EQ(graph.nextOp(graph.ops().back()), nullptr);
}

TEST(GraphTest, AppendingKeepsTheCachesAndErasingRebuildsThem) {
  Chain chain;
  Graph& graph = chain.graph;
  EXPECT_EQ(graph.ops().size(), 3u);
  Op* d = graph.appendOp(OpKind::Relu, {chain.c->result}, "d", f32());
  EXPECT_EQ(graph.opIndex(d), 3u);
  chain.c->operands[0] = chain.a->result;  // b is now dead
  graph.eraseOp(chain.b);
  EXPECT_EQ(names(graph), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_EQ(graph.opIndex(d), 2u);
  EXPECT_EQ(graph.find("b"), nullptr);
  EXPECT_THROW(graph.opIndex(chain.b), InternalError);
  EXPECT_EQ(graph.nextOp(chain.a), chain.c);
}

TEST(GraphTest, ErasingAnOpThatIsStillReadFailsWhenTheOrderIsNextRead) {
  Chain chain;
  chain.graph.eraseOp(chain.b);  // c still reads b
  EXPECT_THROW(chain.graph.ops(), InternalError);
}

TEST(GraphTest, ErasingAnOutputFails) {
  Chain chain;
  chain.graph.addOutput("c", chain.c->result);
  chain.graph.eraseOp(chain.c);
  EXPECT_THROW(chain.graph.ops(), InternalError);
}

TEST(GraphTest, UsersByValueMatchesUsers) {
  Chain chain;
  Graph& graph = chain.graph;
  graph.appendOp(OpKind::Add, {chain.a->result, chain.a->result}, "twice", f32());
  graph.insertOpBefore(chain.c, OpKind::Relu, {chain.a->result}, "early", f32());
  auto byValue = graph.usersByValue();
  for (const Value* value : {chain.x, chain.a->result, chain.b->result, chain.c->result}) {
    std::vector<Op*> expected = graph.users(value);
    auto it = byValue.find(value);
    EXPECT_EQ(it == byValue.end() ? std::vector<Op*>{} : it->second, expected) << value->name;
  }
  EXPECT_EQ(byValue.at(chain.a->result).size(), 3u);  // b, early, twice (once)
}

TEST(GraphTest, ReorderingReplacesTheList) {
  Graph graph("g");
  Value* x = graph.addInput("x", f32());
  Op* a = graph.appendOp(OpKind::Relu, {x}, "a", f32());
  Op* b = graph.appendOp(OpKind::Relu, {x}, "b", f32());
  graph.reorderOps({b, a});
  EXPECT_EQ(names(graph), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(graph.nextOp(b), a);
  graph.insertOpBefore(a, OpKind::Relu, {x}, "c", f32());
  EXPECT_EQ(names(graph), (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(graph.opIndex(a), 2u);
}

TEST(GraphTest, ErasingTheFirstAndLastOpsKeepsBothEnds) {
  Chain chain;
  Graph& graph = chain.graph;
  chain.b->operands[0] = chain.x;  // a and c are now dead
  graph.eraseOp(chain.a);
  graph.eraseOp(chain.c);
  EXPECT_EQ(names(graph), (std::vector<std::string>{"b"}));
  Op* front = graph.insertOpBefore(chain.b, OpKind::Relu, {chain.x}, "front", f32());
  Op* back = graph.appendOp(OpKind::Relu, {chain.b->result}, "back", f32());
  EXPECT_EQ(names(graph), (std::vector<std::string>{"front", "b", "back"}));
  EXPECT_EQ(graph.nextOp(front), chain.b);
  EXPECT_EQ(graph.nextOp(back), nullptr);
  graph.reorderOps({chain.b, front, back});
  EXPECT_EQ(names(graph), (std::vector<std::string>{"b", "front", "back"}));
}

// Ops are known by the graph whose order holds them: one erased, or another graph's, is no
// anchor and has no next op.
TEST(GraphTest, AnErasedOpOrAnotherGraphsOpIsRefused) {
  Chain chain, other;
  chain.graph.eraseOp(chain.c);
  EXPECT_THROW(chain.graph.insertOpBefore(chain.c, OpKind::Relu, {chain.x}, "p", f32()),
               InternalError);
  EXPECT_THROW(chain.graph.nextOp(chain.c), InternalError);
  EXPECT_THROW(chain.graph.eraseOp(chain.c), InternalError);
  EXPECT_THROW(chain.graph.insertOpBefore(other.b, OpKind::Relu, {chain.x}, "q", f32()),
               InternalError);
  EXPECT_THROW(chain.graph.nextOp(other.a), InternalError);
  EXPECT_EQ(names(chain.graph), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(chain.graph.find("p"), nullptr);  // a refused insertion leaves nothing behind
}

// A rewrite that inserts before every op of a long chain, as splitBatch does: every insert
// lands right before its anchor, and positions are right after the batch. (Its cost is
// measured by bench/compile_time_bench.py, in bench/RESULTS.md, not asserted here.)
TEST(GraphTest, ManyInsertionsIntoALongChainKeepTheirPlaces) {
  Graph graph("g");
  Value* previous = graph.addInput("x", f32());
  for (int i = 0; i < 100000; ++i)
    previous = graph.appendOp(OpKind::Relu, {previous}, "l" + std::to_string(i), f32())->result;
  std::vector<Op*> snapshot = graph.ops();
  for (Op* op : snapshot)
    graph.insertOpBefore(op, OpKind::Relu, {op->operands[0]}, op->layerName() + ".s", f32());
  ASSERT_EQ(graph.ops().size(), 200000u);
  EXPECT_EQ(graph.ops()[1], snapshot[0]);
  EXPECT_EQ(graph.opIndex(snapshot.back()), 199999u);
  for (size_t i = 0; i < snapshot.size(); ++i)
    ASSERT_EQ(graph.ops()[2 * i]->layerName(), snapshot[i]->layerName() + ".s");
}

}  // namespace
}  // namespace gxc
