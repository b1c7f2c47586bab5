#include "runtime/cuda/cuda_staging.h"

#include <cuda.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/host/host_threads.h"

namespace gxc {
namespace {

using StreamWaitValue32 = CUresult(CUDAAPI*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// cuStreamWaitValue32 of the driver API, found through the runtime: gxc links cudart_static,
// not libcuda, so that it starts on machines without a driver. The CUDA 12 form of the call.
StreamWaitValue32 streamWaitValue32() {
  static StreamWaitValue32 function = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult result = cudaDriverEntryPointSymbolNotFound;
    cudaError_t status = cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &found, 12000,
                                                          cudaEnableDefault, &result);
    if (status != cudaSuccess) cudaGetLastError();
    return status == cudaSuccess && result == cudaDriverEntryPointSuccess
               ? reinterpret_cast<StreamWaitValue32>(found)
               : nullptr;
  }();
  if (!function)
    runtimeError({},
                 "CUDA error: the NVIDIA driver offers no cuStreamWaitValue32, which staged "
                 "host<->device copies need; install a driver for CUDA 12 or later");
  return function;
}

}  // namespace

CudaStagingBuffer::CudaStagingBuffer(int64_t chunkBytes) : chunkBytes_(chunkBytes) {
  GXC_CHECK(chunkBytes > 0, "staging chunks of {} bytes", chunkBytes);
}

CudaStagingBuffer::~CudaStagingBuffer() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    hasJob_.notify_one();
    thread_.join();  // runs what is queued first, so every ticket the stream waits for is written
  }
  if (device_ < 0) return;
  CudaDeviceGuard guard(device_, /*quiet=*/true);
  // The stream may still wait for a ticket or DMA through the buffers: let it finish first.
  if (stream_) cudaStreamSynchronize(stream_);
  for (cudaEvent_t event : allEvents_) cudaEventDestroy(event);
  if (pinned_) cudaFreeHost(pinned_);
  cudaGetLastError();
}

void CudaStagingBuffer::prepare(const CudaStream& stream) {
  if (stream_) {
    GXC_CHECK(stream_ == stream.get(), "staging buffer of {} used by stream {}", device_,
              stream.name());
    return;
  }
  stream_ = stream.get();
  device_ = stream.device();
  CudaDeviceGuard guard(device_);
  // Two buffers and, 64-byte aligned after them, the counter the stream waits on. Mapped, so
  // the GPU can read the counter; portable, so any GPU's stream may.
  size_t counterAt = (2 * static_cast<size_t>(chunkBytes_) + 63) / 64 * 64;
  void* memory = nullptr;
  checkCuda(cudaHostAlloc(&memory, counterAt + 64, cudaHostAllocMapped | cudaHostAllocPortable),
            fmt::format("pinning a {}-byte staging buffer for {}", counterAt + 64, stream.name()));
  pinned_ = static_cast<std::byte*>(memory);
  ++pinnedAllocations_;
  hostDone_ = reinterpret_cast<uint32_t*>(pinned_ + counterAt);
  *hostDone_ = 0;
  void* onDevice = nullptr;
  checkCuda(cudaHostGetDevicePointer(&onDevice, hostDone_, 0),
            fmt::format("mapping the staging counter of {}", stream.name()));
  hostDoneOnDevice_ = reinterpret_cast<uint64_t>(onDevice);
  streamWaitValue32();  // a driver without it is refused before any copy is queued
  thread_ = std::thread([this] {
    runOnEveryCore();  // not an OpenMP thread: free of the core its creator may be bound to
    stagingLoop();
  });
}

cudaEvent_t CudaStagingBuffer::recordEvent(const CudaStream& stream) {
  cudaEvent_t event = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!freeEvents_.empty()) {
      event = freeEvents_.back();
      freeEvents_.pop_back();
    }
  }
  if (!event) {
    CudaDeviceGuard guard(device_);
    checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
              fmt::format("creating a staging event on {}", stream.name()));
    std::lock_guard lock(mutex_);
    allEvents_.push_back(event);
  }
  checkCuda(cudaEventRecord(event, stream.get()),
            fmt::format("recording a staging event on {}", stream.name()));
  return event;
}

void CudaStagingBuffer::waitForTicket(const CudaStream& stream, uint32_t ticket) {
  // CU_STREAM_WAIT_VALUE_GEQ: until (int32_t)(*counter - ticket) >= 0, so tickets may wrap.
  CUresult status = streamWaitValue32()(reinterpret_cast<CUstream>(stream.get()),
                                        static_cast<CUdeviceptr>(hostDoneOnDevice_), ticket,
                                        CU_STREAM_WAIT_VALUE_GEQ);
  if (status != CUDA_SUCCESS)
    runtimeError({}, "CUDA error: driver error {} (a staged copy's wait on {})",
                 static_cast<int>(status), stream.name());
}

void CudaStagingBuffer::push(Job job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  hasJob_.notify_one();
}

void CudaStagingBuffer::toDevice(const CudaStream& stream, std::shared_ptr<const Tensor> host,
                                 void* device) {
  prepare(stream);
  auto* target = static_cast<std::byte*>(device);
  int64_t total = static_cast<int64_t>(host->nbytes());
  int64_t chunks = std::max<int64_t>(1, (total + chunkBytes_ - 1) / chunkBytes_);
  // The stream has reached this copy once `reached` completes: no earlier DMA of the stream
  // still reads the buffers.
  cudaEvent_t reached = recordEvent(stream);
  std::vector<cudaEvent_t> dmaDone(static_cast<size_t>(chunks), nullptr);
  for (int64_t k = 0; k < chunks; ++k) {
    int64_t at = k * chunkBytes_;
    size_t bytes = static_cast<size_t>(std::min(chunkBytes_, total - at));
    std::byte* buffer = pinned_ + (k % 2) * chunkBytes_;
    Job job;
    job.after = k == 0 ? reached : k >= 2 ? dmaDone[static_cast<size_t>(k - 2)] : nullptr;
    job.destination = buffer;
    job.source = host->data() + at;
    job.bytes = bytes;
    job.keep = host;
    job.ticket = ++nextTicket_;
    uint32_t ticket = job.ticket;
    push(std::move(job));
    waitForTicket(stream, ticket);
    checkCuda(cudaMemcpyAsync(target + at, buffer, bytes, cudaMemcpyHostToDevice, stream.get()),
              fmt::format("host-to-device copy on {}", stream.name()));
    if (k + 2 < chunks) dmaDone[static_cast<size_t>(k)] = recordEvent(stream);
  }
}

void CudaStagingBuffer::toHost(const CudaStream& stream, const void* device,
                               std::shared_ptr<Tensor> host) {
  prepare(stream);
  const auto* source = static_cast<const std::byte*>(device);
  int64_t total = static_cast<int64_t>(host->nbytes());
  int64_t chunks = std::max<int64_t>(1, (total + chunkBytes_ - 1) / chunkBytes_);
  std::vector<uint32_t> tickets(static_cast<size_t>(chunks), 0);
  for (int64_t k = 0; k < chunks; ++k) {
    int64_t at = k * chunkBytes_;
    size_t bytes = static_cast<size_t>(std::min(chunkBytes_, total - at));
    std::byte* buffer = pinned_ + (k % 2) * chunkBytes_;
    // The buffer is free once chunk k-2's memcpy out of it is done; before that, the copies
    // that came earlier on this stream ended by waiting for their own last memcpy.
    if (k >= 2) waitForTicket(stream, tickets[static_cast<size_t>(k - 2)]);
    checkCuda(cudaMemcpyAsync(buffer, source + at, bytes, cudaMemcpyDeviceToHost, stream.get()),
              fmt::format("device-to-host copy on {}", stream.name()));
    Job job;
    job.after = recordEvent(stream);
    job.destination = host->data() + at;
    job.source = buffer;
    job.bytes = bytes;
    job.keep = host;
    job.ticket = tickets[static_cast<size_t>(k)] = ++nextTicket_;
    push(std::move(job));
  }
  waitForTicket(stream, tickets.back());
}

void CudaStagingBuffer::throughHost(const CudaStream& stream, const void* source, void* destination,
                                    int64_t bytes) {
  prepare(stream);
  const auto* from = static_cast<const std::byte*>(source);
  auto* to = static_cast<std::byte*>(destination);
  for (int64_t at = 0; at < bytes; at += chunkBytes_) {
    size_t chunk = static_cast<size_t>(std::min(chunkBytes_, bytes - at));
    // cudaMemcpyDefault: the unified address of each side says which GPU it is on. Both DMAs
    // are on the stream, so the buffer is reused only after the previous chunk left it.
    checkCuda(cudaMemcpyAsync(pinned_, from + at, chunk, cudaMemcpyDefault, stream.get()),
              fmt::format("staged device-to-device copy on {}", stream.name()));
    checkCuda(cudaMemcpyAsync(to + at, pinned_, chunk, cudaMemcpyDefault, stream.get()),
              fmt::format("staged device-to-device copy on {}", stream.name()));
  }
}

void CudaStagingBuffer::rethrowFailure() {
  std::exception_ptr failure;
  {
    std::lock_guard lock(mutex_);
    failure = std::exchange(failure_, nullptr);
  }
  if (failure) std::rethrow_exception(failure);
}

void CudaStagingBuffer::stagingLoop() {
  // Events of this GPU are waited for here; make it current once for the thread.
  cudaSetDevice(device_);
  std::unique_lock lock(mutex_);
  for (;;) {
    hasJob_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and everything queued has run
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    runJob(job);
    job = Job{};  // release the tensor outside the lock
    lock.lock();
    running_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

void CudaStagingBuffer::waitIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return jobs_.empty() && !running_; });
}

void CudaStagingBuffer::runJob(Job& job) {
  bool ready = true;
  if (job.after) {
    cudaError_t status = cudaEventSynchronize(job.after);
    std::lock_guard lock(mutex_);
    freeEvents_.push_back(job.after);
    if (status != cudaSuccess) {
      ready = false;
      cudaGetLastError();
      if (!failure_)
        failure_ =
            std::make_exception_ptr(Error(ErrorKind::Runtime, {},
                                          fmt::format("CUDA error: {} (a staged copy on GPU {})",
                                                      cudaGetErrorString(status), device_)));
    }
  }
  // After a failure the data is not copied, but the ticket is still written: the stream
  // must not hang on it, and the error is reported when the run synchronizes.
  if (ready) std::memcpy(job.destination, job.source, job.bytes);
  std::atomic_ref<uint32_t>(*hostDone_).store(job.ticket, std::memory_order_release);
}

}  // namespace gxc
