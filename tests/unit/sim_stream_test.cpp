// Streams and events of the sim platform: order within a stream, real concurrency between
// streams, events ordering work across streams, and asynchronous errors reported at the next
// synchronization. Every test that could hang if the streams were wrong waits with a timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/sim/sim_stream.h"

namespace gxc {
namespace {

using namespace std::chrono_literals;

// A one-shot flag threads can wait on, with a timeout so a broken stream fails, not hangs.
class Flag {
 public:
  void set() {
    {
      std::lock_guard lock(mutex_);
      set_ = true;
    }
    changed_.notify_all();
  }
  bool waitFor(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

TEST(SimStreamTest, RunsTasksInOrder) {
  SimStream stream("cuda:0.compute");
  std::vector<int> seen;  // touched by the worker only until synchronize returns
  for (int i = 0; i < 100; ++i) stream.enqueue([&seen, i] { seen.push_back(i); });
  stream.synchronize();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
}

TEST(SimStreamTest, TwoStreamsReallyRunAtTheSameTime) {
  // Each task waits for the other to have started: serialized, both would time out.
  SimStream first("cuda:0.compute");
  SimStream second("cuda:1.compute");
  Flag firstStarted, secondStarted;
  std::atomic<bool> firstSawSecond{false}, secondSawFirst{false};
  first.enqueue([&] {
    firstStarted.set();
    firstSawSecond = secondStarted.waitFor(10s);
  });
  second.enqueue([&] {
    secondStarted.set();
    secondSawFirst = firstStarted.waitFor(10s);
  });
  first.synchronize();
  second.synchronize();
  EXPECT_TRUE(firstSawSecond);
  EXPECT_TRUE(secondSawFirst);
}

TEST(SimStreamTest, AWaitedEventOrdersWorkAcrossStreams) {
  SimStream producer("cuda:0.compute");
  SimStream consumer("cuda:1.d2d");
  SimEvent ready;
  Flag gate;
  int value = 0;  // plain data: the event alone must order the write before the read
  int read = -1;
  producer.enqueue([&] {
    ASSERT_TRUE(gate.waitFor(10s));  // hold the producer until the consumer has queued up
    value = 42;
  });
  producer.record(ready);
  consumer.wait(ready);
  consumer.enqueue([&] { read = value; });
  gate.set();
  consumer.synchronize();
  producer.synchronize();
  EXPECT_EQ(read, 42);
}

TEST(SimStreamTest, AWaitRefersToTheRecordsEnqueuedBeforeIt) {
  SimStream producer("cuda:0.compute");
  SimStream consumer("cuda:1.compute");
  SimEvent event;
  // Never recorded: waiting on it is no wait at all, as in CUDA.
  std::atomic<bool> ran{false};
  consumer.wait(event);
  consumer.enqueue([&] { ran = true; });
  consumer.synchronize();
  EXPECT_TRUE(ran);
  // Recorded once; a record enqueued after the wait (behind a gate) does not hold it up.
  producer.record(event);
  producer.synchronize();
  Flag gate;
  producer.enqueue([&] { ASSERT_TRUE(gate.waitFor(10s)); });
  consumer.wait(event);
  producer.record(event);
  Flag consumerRan;
  consumer.enqueue([&] { consumerRan.set(); });
  EXPECT_TRUE(consumerRan.waitFor(10s));
  gate.set();
  producer.synchronize();
  consumer.synchronize();
}

TEST(SimStreamTest, HostCanWaitForAnEvent) {
  SimStream stream("cuda:0.h2d");
  SimEvent done;
  int value = 0;
  stream.enqueue([&] {
    std::this_thread::sleep_for(20ms);
    value = 7;
  });
  stream.record(done);
  done.synchronize();
  EXPECT_EQ(value, 7);
  stream.synchronize();
}

TEST(SimStreamTest, AnErrorIsReportedAtSynchronizeAndSkipsLaterTasks) {
  SimStream stream("cuda:0.compute");
  std::atomic<int> ranAfter{0};
  stream.enqueue([] { throw std::runtime_error("device-side assert"); });
  stream.enqueue([&] { ++ranAfter; });
  stream.enqueue([&] { ++ranAfter; });
  try {
    stream.synchronize();
    FAIL() << "expected the task's error";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "device-side assert");
  }
  EXPECT_EQ(ranAfter, 0);
  // Reported once; the stream serves the next run.
  stream.enqueue([&] { ++ranAfter; });
  EXPECT_NO_THROW(stream.synchronize());
  EXPECT_EQ(ranAfter, 1);
}

TEST(SimStreamTest, AnErrorReachesTheStreamsThatWaitForIt) {
  SimStream failing("cuda:0.compute");
  SimStream dependent("cuda:1.compute");
  SimStream independent("cuda:2.compute");
  SimEvent event;
  std::atomic<bool> dependentRan{false}, independentRan{false};
  failing.enqueue([] { throw std::runtime_error("index out of range"); });
  failing.record(event);
  dependent.wait(event);
  dependent.enqueue([&] { dependentRan = true; });
  independent.enqueue([&] { independentRan = true; });
  EXPECT_THROW(dependent.synchronize(), std::runtime_error);
  EXPECT_THROW(failing.synchronize(), std::runtime_error);
  EXPECT_NO_THROW(independent.synchronize());
  EXPECT_FALSE(dependentRan);
  EXPECT_TRUE(independentRan);
}

TEST(SimStreamTest, DestroyingAStreamRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    SimStream stream("cuda:0.compute");
    for (int i = 0; i < 10; ++i)
      stream.enqueue([&] {
        std::this_thread::sleep_for(1ms);
        ++ran;
      });
  }
  EXPECT_EQ(ran, 10);
}

}  // namespace
}  // namespace gxc
