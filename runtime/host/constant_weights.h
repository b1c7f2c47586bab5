// The weights a host executor may keep packed between runs: its params that no step of the
// graph writes (an inference graph's are all of them; a training graph's are those it does not
// train), and their copies in the layouts oneDNN's primitives prefer, made at a weight's first
// use and reused by every later run, as ONNX Runtime prepacks its initializers. A linear layer
// of the wide MLP at batch 64 took 10-18% less time with its weights packed than with oneDNN
// packing them inside every call; a convolution saves the reorder of its weights.
//
// Requires: the executor calls forgetPacked() whenever it overwrites params from outside the
// graph (HostExecutor::setParamValues): a packed copy is only as fresh as the bytes it came from.
// Used by one thread at a time (the host executor runs its steps in order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "ir/graph.h"

namespace gxc {

class ConstantWeights {
 public:
  ConstantWeights() = default;
  explicit ConstantWeights(std::set<const Value*> constant) : constant_(std::move(constant)) {}

  // Whether `value` keeps its bytes from one run to the next: a param no step writes.
  bool holds(const Value* value) const { return constant_.count(value) != 0; }

  // The packed copy of the weights at `plain` in the layout `layout` names (a primitive of the
  // process, whose layout never changes): `bytes` long, 64-byte aligned, filled by `pack` at the
  // first call and returned as it is at every later one.
  const void* packed(const void* plain, const void* layout, size_t bytes,
                     const std::function<void(void* into)>& pack);

  // Drops every packed copy: the params were overwritten.
  void forgetPacked() { packed_.clear(), bytes_ = 0; }
  // What the packed copies hold, in bytes.
  int64_t packedBytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::set<const Value*> constant_;
  std::map<std::pair<const void*, const void*>, std::unique_ptr<std::byte, Free>> packed_;
  int64_t bytes_ = 0;
};

}  // namespace gxc
