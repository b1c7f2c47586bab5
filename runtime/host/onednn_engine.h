// The one oneDNN CPU engine of the process, shared by the host's convolutions and attention:
// engines are thread-safe, and making one per call costs more than small primitives do.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdlib>
#include <memory>

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
