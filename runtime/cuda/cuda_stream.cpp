#include "runtime/cuda/cuda_stream.h"

#include <fmt/format.h>

#include "runtime/cuda/cuda_check.h"

namespace gxc {

CudaStream::CudaStream(int device, std::string name) : device_(device), name_(std::move(name)) {
  CudaDeviceGuard guard(device);
  checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
            fmt::format("creating stream {}", name_));
}

CudaStream::~CudaStream() {
  if (!stream_) return;
  CudaDeviceGuard guard(device_, /*quiet=*/true);
  cudaStreamDestroy(stream_);
}

void CudaStream::synchronize() const {
  checkCuda(cudaStreamSynchronize(stream_), fmt::format("work on stream {}", name_));
}

CudaEvent::CudaEvent(int device, bool timing) : device_(device) {
  CudaDeviceGuard guard(device);
  checkCuda(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
            fmt::format("creating an event on GPU {}", device));
}

CudaEvent::~CudaEvent() {
  if (!event_) return;
  CudaDeviceGuard guard(device_, /*quiet=*/true);
  cudaEventDestroy(event_);
}

void CudaEvent::record(const CudaStream& stream) {
  checkCuda(cudaEventRecord(event_, stream.get()),
            fmt::format("recording an event on {}", stream.name()));
}

void CudaEvent::waitOn(const CudaStream& stream) const {
  // An event of another GPU is fine: cudaStreamWaitEvent orders across devices.
  checkCuda(cudaStreamWaitEvent(stream.get(), event_, 0),
            fmt::format("{} waiting for an event", stream.name()));
}

void CudaEvent::synchronize() const {
  checkCuda(cudaEventSynchronize(event_), fmt::format("work before an event on GPU {}", device_));
}

bool CudaEvent::done() const {
  cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  checkCuda(status, fmt::format("work before an event on GPU {}", device_));
  return true;
}

float CudaEvent::millisecondsSince(const CudaEvent& start) const {
  float ms = 0;
  checkCuda(cudaEventElapsedTime(&ms, start.get(), event_), "timing events");
  return ms;
}

std::unique_ptr<CudaEvent> CudaEventPool::take(int device) {
  std::vector<std::unique_ptr<CudaEvent>>& free = free_[device];
  if (free.empty()) {
    ++created_;
    return std::make_unique<CudaEvent>(device);
  }
  std::unique_ptr<CudaEvent> event = std::move(free.back());
  free.pop_back();
  return event;
}

void CudaEventPool::giveBack(std::unique_ptr<CudaEvent> event) {
  if (event) free_[event->device()].push_back(std::move(event));
}

}  // namespace gxc
