// The one oneDNN CPU engine of the process, shared by the host's convolutions and attention:
// engines are thread-safe, and making one per call costs more than small primitives do.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace gxc {

const dnnl::engine& oneDnnEngine();

// Primitive attributes with the scratchpad left to the caller, who passes a fresh one
// (DNNL_ARG_SCRATCHPAD, of the primitive descriptor's scratchpad_desc()) at every execution.
// With the library's own, a primitive keeps one scratchpad for all its executions, and two
// threads running the same primitive at once (the sim platform's streams; oneDNN's
// primitive cache hands equal primitives the same implementation) would share it.
dnnl::primitive_attr userScratchpad();

// The calling thread's oneDNN stream and scratchpad, shared by every primitive the thread runs
// (convolutions, matmuls, softmax): a thread runs one primitive at a time, and each waits for
// its stream before it returns.
dnnl::stream& threadStream();
// The thread's scratchpad, at least `bytes` long.
void* threadScratchpad(size_t bytes);

// The calling thread's arguments of one prepared primitive (`prepared`, its address the key),
// in the map execute() takes: made once by `make` (memory objects at their descs, over no
// data), then pointed at each call's data with set_data_handle. Made at every call, the memory
// objects and the map cost a small primitive (a layer norm over 64 rows of 32) about as much as
// its arithmetic. One map per thread, as the thread's stream and scratchpad are.
template <typename Make>
std::unordered_map<int, dnnl::memory>& threadArgs(const void* prepared, Make make) {
  thread_local std::unordered_map<const void*, std::unordered_map<int, dnnl::memory>> byPrepared;
  auto [it, created] = byPrepared.try_emplace(prepared);
  if (created) make(it->second);
  return it->second;
}

// oneDNN primitives (with what their calls need) made once per key and kept for the process:
// a model runs the same shapes at every step, and made at each call a primitive costs more
// than a small problem's arithmetic. Safe from any thread (the sim platform's streams); an
// entry, once made, never moves.
template <typename Key, typename Prepared>
class PreparedPrimitives {
 public:
  template <typename Make>
  const Prepared& get(const Key& key, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Prepared>& entry = prepared_[key];
    if (!entry) entry = std::make_unique<Prepared>(make());
    return *entry;
  }

 private:
  std::mutex mutex_;
  std::map<Key, std::unique_ptr<Prepared>> prepared_;
};

// 64-byte aligned memory that only grows: a thread's buffer for one role (its scratchpad, a
// blocked layout), reused by every primitive the thread runs (they run one at a time), so a
// call allocates nothing once the largest has run.
class GrowingBuffer {
 public:
  void* atLeast(size_t bytes);

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t capacity_ = 0;
};

}  // namespace gxc
