// Streams and events of the cuda platform: RAII owners of cudaStream_t and cudaEvent_t,
// each created on its GPU. The executor maps the schedule's streams ("cuda:0.h2d") and
// event ids onto these, as the sim platform maps them onto host threads (sim_stream.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gxc {

class CudaStream {
 public:
  // A non-blocking stream on CUDA device `device`: it does not synchronize with the legacy
  // default stream, so only the schedule's events order it against other streams.
  CudaStream(int device, std::string name);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  const std::string& name() const { return name_; }
  // Waits for everything queued; a failure of queued work is a runtime error naming the stream.
  void synchronize() const;

 private:
  int device_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  // `timing`: whether elapsed times can be measured (costs a little on every record).
  CudaEvent(int device, bool timing = false);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  int device() const { return device_; }
  void record(const CudaStream& stream);
  void waitOn(const CudaStream& stream) const;  // `stream` waits for the last record
  void synchronize() const;                     // the host waits for it
  bool done() const;                            // completed (or never recorded)
  // Milliseconds from `start` to this event; both recorded with timing.
  float millisecondsSince(const CudaEvent& start) const;

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

// Events without timing, reused: the executor records one on every stream that used a block
// it frees, and would otherwise create (and destroy) an event per freed value and stream.
// One taken is the caller's until given back; recording a given-back event again is safe once
// nothing waits on its last record (the executor gives one back when it has completed).
class CudaEventPool {
 public:
  std::unique_ptr<CudaEvent> take(int device);
  void giveBack(std::unique_ptr<CudaEvent> event);
  int64_t created() const { return created_; }  // events made so far, in all

 private:
  std::map<int, std::vector<std::unique_ptr<CudaEvent>>> free_;  // by CUDA device
  int64_t created_ = 0;
};

}  // namespace gxc
