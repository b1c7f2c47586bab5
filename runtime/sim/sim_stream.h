// Streams and events of the `sim` platform: CUDA's execution model on host threads.
//
// What it does: a SimStream is one worker thread running a FIFO of tasks, in order, while the
// thread that enqueues them goes on (cudaLaunchKernel, cudaMemcpyAsync). Different streams
// run truly concurrently. A SimEvent is recorded on a stream (it completes when everything
// enqueued there before it has run) and waited on by other streams (what they enqueue after
// the wait starts only once the event has completed), as cudaEventRecord and
// cudaStreamWaitEvent do.
//
// Errors behave as asynchronous CUDA errors: a task that throws poisons its stream; the
// stream's later tasks are skipped, events it records carry the error, and a stream that
// waits for such an event is poisoned with the same error (its dependent work never runs on
// missing data). `synchronize()` rethrows the error and clears it, so the stream can serve
// the next run.
//
// Requires: one thread enqueues onto a stream (tasks, records, waits, synchronize); events
// outlive the streams that use them; an event is recorded by one stream at a time.
// Guarantees: no busy waiting (condition variables only); the destructor runs what is queued
// and joins the thread; a task's captures are destroyed on the worker right after it runs
// (or is skipped), so shared data it held is released in order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gxc {

class SimEvent {
 public:
  SimEvent() = default;
  SimEvent(const SimEvent&) = delete;
  SimEvent& operator=(const SimEvent&) = delete;

  // cudaEventSynchronize: blocks the calling thread until the latest record enqueued so far
  // has completed; rethrows the error it carried.
  void synchronize();

 private:
  friend class SimStream;
  uint64_t enqueueRecord();  // a new generation; returns it
  uint64_t latestRecord();   // the generation a wait enqueued now refers to
  void complete(uint64_t generation, std::exception_ptr error);
  std::exception_ptr waitFor(uint64_t generation);  // blocks; the error of that completion

  std::mutex mutex_;
  std::condition_variable completed_;
  uint64_t enqueuedGeneration_ = 0;
  uint64_t completedGeneration_ = 0;
  std::exception_ptr error_;  // carried by the latest completion
};

class SimStream {
 public:
  explicit SimStream(std::string name);
  SimStream(const SimStream&) = delete;
  SimStream& operator=(const SimStream&) = delete;
  ~SimStream();

  const std::string& name() const { return name_; }

  void enqueue(std::function<void()> task);
  void record(SimEvent& event);
  // An event never recorded counts as complete, as in CUDA.
  void wait(SimEvent& event);
  // Blocks until every task enqueued so far has run or been skipped; then rethrows the first
  // error since the last synchronize, if any, and clears it.
  void synchronize();

 private:
  struct Task {
    enum class Kind { Work, Record, Wait } kind = Kind::Work;
    std::function<void()> work;
    SimEvent* event = nullptr;
    uint64_t generation = 0;
  };

  void push(Task task);
  void workerLoop();

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable hasWork_;
  std::condition_variable drained_;
  std::deque<Task> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread worker_;  // last: starts once everything above exists
};

}  // namespace gxc
