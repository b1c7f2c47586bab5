#include "runtime/host/onednn_engine.h"

#include "ir/diagnostic.h"

namespace gxc {

const dnnl::engine& oneDnnEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::stream& threadStream() {
  thread_local dnnl::stream stream(oneDnnEngine());
  return stream;
}

void* threadScratchpad(size_t bytes) {
  thread_local GrowingBuffer scratchpad;
  return scratchpad.atLeast(bytes);
}

void* GrowingBuffer::atLeast(size_t bytes) {
  if (bytes > capacity_) {
    const size_t capacity = (bytes + 63) / 64 * 64;
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, capacity)));
    GXC_CHECK(data_ != nullptr, "out of host memory for a {}-byte oneDNN buffer", capacity);
    capacity_ = capacity;
  }
  return data_.get();
}

}  // namespace gxc
