// An arena's bytes in host memory: where the `cpu` platform keeps its activations, and where
// the `sim` platform keeps the data of each device's arena.
//
// What it does: allocates one block of `bytes`, aligned as cudaMalloc aligns (256 bytes) and
// zero-filled, when it is made, and hands out views of the values placed in it
// (runtime/memory_plan.h).
// Requires: views of placements that lie inside the arena (MemoryPlan checks they do).
// Guarantees: the block does not move while the arena lives; a zero-byte arena holds no memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

class HostArena {
 public:
  static constexpr size_t kAlignment = 256;

  HostArena() = default;
  explicit HostArena(int64_t bytes);

  std::byte* data() const { return data_.get(); }
  int64_t bytes() const { return bytes_; }
  // The value's bytes at `offset` in the arena, as its type says.
  TensorView view(const Value* value, int64_t offset) const;

 private:
  struct Free {
    void operator()(std::byte* data) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  int64_t bytes_ = 0;
};

}  // namespace gxc
