// Chrome trace JSON: what the viewers need to show one process per device and one lane per
// stream (name metadata), complete spans, and arrows for event waits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/trace.h"

namespace gxc {
namespace {

using nlohmann::json;

std::vector<json> eventsWithPhase(const json& trace, const std::string& phase) {
  std::vector<json> out;
  for (const json& event : trace.at("traceEvents"))
    if (event.at("ph") == phase) out.push_back(event);
  return out;
}

TEST(SimTraceTest, WritesProcessesLanesSpansAndFlows) {
  ChromeTrace trace;
  trace.declareProcess("cpu", "cpu (host)");
  trace.declareProcess("cuda:0", "cuda:0 (sim GPU 1)");
  trace.declareLane("cuda:0", "cuda:0.compute");
  trace.declareLane("cuda:0", "cuda:0.h2d");
  TraceSpan copy{"cuda:0", "cuda:0.h2d", "%x.cuda0 = copy", "copy", 0.0, 5.2, {{"bytes", 6400}}};
  TraceSpan matmul{"cuda:0", "cuda:0.compute", "%h = matmul", "gemm", 5.2, 5.064, {}};
  size_t from = trace.addSpan(copy);
  size_t to = trace.addSpan(matmul);
  trace.addFlow(from, to, "event 0");

  json parsed = json::parse(trace.str());  // the text, not just the object, is valid JSON
  EXPECT_EQ(parsed.at("displayTimeUnit"), "ns");
  std::map<std::string, int> pids;
  for (const json& meta : eventsWithPhase(parsed, "M"))
    if (meta.at("name") == "process_name") pids[meta.at("args").at("name")] = meta.at("pid");
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_LT(pids.at("cpu (host)"), pids.at("cuda:0 (sim GPU 1)"));
  std::map<std::string, int> tids;
  for (const json& meta : eventsWithPhase(parsed, "M"))
    if (meta.at("name") == "thread_name") {
      EXPECT_EQ(meta.at("pid"), pids.at("cuda:0 (sim GPU 1)"));
      tids[meta.at("args").at("name")] = meta.at("tid");
    }
  ASSERT_EQ(tids.size(), 2u);
  EXPECT_LT(tids.at("cuda:0.compute"), tids.at("cuda:0.h2d"));  // declared order

  auto spans = eventsWithPhase(parsed, "X");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[1].at("name"), "%h = matmul");
  EXPECT_EQ(spans[1].at("cat"), "gemm");
  EXPECT_EQ(spans[1].at("tid"), tids.at("cuda:0.compute"));
  EXPECT_DOUBLE_EQ(spans[1].at("ts").get<double>(), 5.2);
  EXPECT_DOUBLE_EQ(spans[1].at("dur").get<double>(), 5.064);
  EXPECT_EQ(spans[0].at("args").at("bytes"), 6400);

  auto starts = eventsWithPhase(parsed, "s");
  auto finishes = eventsWithPhase(parsed, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0].at("id"), finishes[0].at("id"));
  EXPECT_EQ(starts[0].at("tid"), tids.at("cuda:0.h2d"));
  EXPECT_EQ(finishes[0].at("tid"), tids.at("cuda:0.compute"));
  EXPECT_EQ(finishes[0].at("bp"), "e");
}

TEST(SimTraceTest, UndeclaredProcessesAndLanesAppearOnFirstUse) {
  ChromeTrace trace;
  trace.addSpan({"cuda:1", "cuda:1.d2h", "%y.cpu = copy", "copy", 1.0, 2.0, {}});
  json parsed = trace.toJson();
  int names = 0;
  for (const json& meta : eventsWithPhase(parsed, "M"))
    if (meta.at("name") == "process_name" || meta.at("name") == "thread_name") ++names;
  EXPECT_EQ(names, 2);
}

}  // namespace
}  // namespace gxc
