#include "runtime/sim/sim_stream.h"

#include <utility>

#include "runtime/host/host_threads.h"

namespace gxc {

uint64_t SimEvent::enqueueRecord() {
  std::lock_guard lock(mutex_);
  return ++enqueuedGeneration_;
}

uint64_t SimEvent::latestRecord() {
  std::lock_guard lock(mutex_);
  return enqueuedGeneration_;
}

void SimEvent::complete(uint64_t generation, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (generation > completedGeneration_) {
      completedGeneration_ = generation;
      error_ = std::move(error);
    }
  }
  completed_.notify_all();
}

std::exception_ptr SimEvent::waitFor(uint64_t generation) {
  std::unique_lock lock(mutex_);
  completed_.wait(lock, [&] { return completedGeneration_ >= generation; });
  return generation == 0 ? nullptr : error_;
}

void SimEvent::synchronize() {
  if (std::exception_ptr error = waitFor(latestRecord())) std::rethrow_exception(error);
}

SimStream::SimStream(std::string name)
    : name_(std::move(name)), worker_([this] {
        runOnEveryCore();  // not an OpenMP thread: free of the core its creator may be bound to
        workerLoop();
      }) {}

SimStream::~SimStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  hasWork_.notify_one();
  worker_.join();
}

void SimStream::push(Task task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  hasWork_.notify_one();
}

void SimStream::enqueue(std::function<void()> task) {
  push({Task::Kind::Work, std::move(task), nullptr, 0});
}

void SimStream::record(SimEvent& event) {
  push({Task::Kind::Record, nullptr, &event, event.enqueueRecord()});
}

void SimStream::wait(SimEvent& event) {
  // The generation is fixed now, as cudaStreamWaitEvent fixes the work it waits for when it
  // is called: records enqueued later do not delay this wait.
  uint64_t generation = event.latestRecord();
  if (generation == 0) return;
  push({Task::Kind::Wait, nullptr, &event, generation});
}

void SimStream::synchronize() {
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
    error = std::exchange(error_, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

void SimStream::workerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    hasWork_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    std::exception_ptr poisoned = error_;
    lock.unlock();

    std::exception_ptr thrown;
    switch (task.kind) {
      case Task::Kind::Record:
        // Always completes, so no waiter hangs; it hands on this stream's error, if any.
        task.event->complete(task.generation, poisoned);
        break;
      case Task::Kind::Wait:
        if (!poisoned) thrown = task.event->waitFor(task.generation);
        break;
      case Task::Kind::Work:
        if (!poisoned) {
          try {
            task.work();
          } catch (...) {
            thrown = std::current_exception();
          }
        }
        break;
    }
    task = Task{};  // drop the captures here, outside the lock

    lock.lock();
    if (thrown && !error_) error_ = thrown;
    busy_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace gxc
