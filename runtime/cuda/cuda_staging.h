// Pinned staging of the cuda platform: how host<->device copies (and device<->device copies
// between GPUs without peer access) move. The sim platform models exactly this pipeline
// (runtime/sim/sim_staging.h, simStagedCopySeconds in target/cost_model.h). Host<->GPU copies
// have run on one H200 (scripts/gpu-check.sh); GPU<->GPU copies staged here never have.
//
// Why. gxc's host tensors are pageable; a DMA needs pinned memory. A copy therefore has two
// legs per chunk, a host memcpy between the tensor and a pinned buffer and a DMA between the
// buffer and the GPU, and is fast only if chunk i+1's memcpy runs while chunk i's DMA does.
// Doing the memcpy in a cudaLaunchHostFunc callback cannot give that: a callback blocks its
// stream until it returns, so on one stream memcpy and DMA alternate, and CUDA runs the
// callbacks of all streams on its own thread(s), "possibly serialized" (cudaLaunchHostFunc's
// documentation), so one GPU's memcpy would wait for another's.
//
// What it does. Each object belongs to one copy stream (the executor makes one per copy
// stream). On first use it pins one allocation (cudaHostAlloc, mapped): two buffers of
// `chunkBytes` and a 32-bit counter, and starts its own staging thread. A copy is queued in
// stream order and returns at once; chunk i goes through buffer i % 2:
//   - toward the GPU: the staging thread memcpys chunk i into its buffer, then writes the
//     chunk's ticket to the counter; on the stream, cuStreamWaitValue32 holds the chunk's DMA
//     until the counter reaches that ticket. The thread starts chunk 0 once an event recorded
//     on the stream when the copy was issued has completed (the stream has reached the copy,
//     so no earlier DMA still reads the buffers), and chunk i >= 2 once the event recorded
//     after chunk i-2's DMA has (its buffer is free again);
//   - toward the host: the stream DMAs chunk i into its buffer (from chunk 2 on, after
//     cuStreamWaitValue32 for the ticket of chunk i-2's memcpy, which frees the buffer) and
//     records an event; the staging thread waits for it, memcpys the chunk out and writes its
//     ticket. The stream's last operation of the copy waits for the last ticket, so whatever
//     the stream does (or records) after the copy sees the host tensor complete.
// So per chunk one leg overlaps the other leg of the previous chunk, and each stream's host
// side runs on its own thread: no GPU waits for another's memcpy, and no CUDA callback runs.
// Device-to-device through the host is two DMAs per chunk on the stream, no host work.
//
// The events are CUDA-visible ordering; the counter waits are not (cuStreamWaitValue32's
// caveat), so the contract that keeps them deadlock-free is: the staging thread only ever
// waits for events recorded before the counter wait it will release, on the same stream, and
// takes its jobs in issue order.
//
// Requires: the tensors handed in stay alive until the copy has run (the staging thread holds
// them by shared_ptr); device pointers are valid on the stream's GPU (for staged
// device-to-device copies, anywhere: addresses are unified); every call on one object passes
// the same stream; the stream is synchronized before the object is destroyed or its errors
// are read. The driver must offer cuStreamWaitValue32 (CUDA 12 and later do on every GPU
// gxc supports); a driver without it is a runtime error naming it.
// Guarantees: one pinning per object; a copy is asynchronous, ordered on its stream like a
// kernel; a CUDA error on the staging thread is kept and rethrown by rethrowFailure(), and
// the thread still releases every counter wait, so no stream hangs on it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/cuda/cuda_stream.h"
#include "target/cost_model.h"
#include "tensor/tensor.h"

namespace gxc {

class CudaStagingBuffer {
 public:
  static constexpr int64_t kDefaultChunkBytes = kStagingChunkBytes;

  explicit CudaStagingBuffer(int64_t chunkBytes = kDefaultChunkBytes);
  ~CudaStagingBuffer();
  CudaStagingBuffer(const CudaStagingBuffer&) = delete;
  CudaStagingBuffer& operator=(const CudaStagingBuffer&) = delete;

  void toDevice(const CudaStream& stream, std::shared_ptr<const Tensor> host, void* device);
  void toHost(const CudaStream& stream, const void* device, std::shared_ptr<Tensor> host);
  // Device to device through the host, for GPUs that cannot access each other's memory.
  void throughHost(const CudaStream& stream, const void* source, void* destination, int64_t bytes);

  int64_t pinnedAllocations() const { return pinnedAllocations_; }
  // Returns once the staging thread has run every job queued so far: no memcpy still reads or
  // writes a tensor handed in. After a synchronize this is at once, except after a CUDA error,
  // where the stream can return before the thread is done.
  void waitIdle();
  // Rethrows the first CUDA error the staging thread met since the last call, and clears it.
  void rethrowFailure();

 private:
  // One chunk's host leg: wait for `after` (if any), memcpy, then write `ticket`.
  struct Job {
    cudaEvent_t after = nullptr;
    void* destination = nullptr;
    const void* source = nullptr;
    size_t bytes = 0;
    std::shared_ptr<const void> keep;
    uint32_t ticket = 0;
  };

  void prepare(const CudaStream& stream);
  cudaEvent_t recordEvent(const CudaStream& stream);
  void waitForTicket(const CudaStream& stream, uint32_t ticket);
  void push(Job job);
  void stagingLoop();
  void runJob(Job& job);

  const int64_t chunkBytes_;
  std::byte* pinned_ = nullptr;    // two buffers, then the counter
  uint32_t* hostDone_ = nullptr;   // the last ticket the staging thread finished
  uint64_t hostDoneOnDevice_ = 0;  // its address for cuStreamWaitValue32
  uint32_t nextTicket_ = 0;        // issuing thread only
  cudaStream_t stream_ = nullptr;  // the stream every call passes
  int device_ = -1;
  int64_t pinnedAllocations_ = 0;

  std::mutex mutex_;  // guards everything below
  std::condition_variable hasJob_;
  std::condition_variable idle_;  // no job queued, none running
  std::deque<Job> jobs_;
  bool running_ = false;  // the thread is in runJob
  std::vector<cudaEvent_t> freeEvents_;
  std::vector<cudaEvent_t> allEvents_;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread thread_;  // started by prepare(), after everything above
};

}  // namespace gxc
