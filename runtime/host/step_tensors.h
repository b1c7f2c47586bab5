// The tensors one step of the host reads, by the values they hold: the step's inputs, and for a
// GEMM's or convolution's epilogue the product it reads in the result's own bytes.
//
// A step reads a few (at most kMaxKernelArgs), and the host runs one step per op every
// iteration, so this is a list searched in order that points at the caller's views: a
// std::map of copies made each step a tree node and a shape vector per value, which showed in
// the small models' time (gpt_decoder at batch 4, some 70 steps of a few microseconds each).
#pragma once

#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

class StepTensors {
 public:
  // The step's inputs, `tensors[i]` holding `values[i]`; both outlive this.
  StepTensors(const std::vector<const Value*>& values,
              const std::vector<ConstTensorView>& tensors) {
    GXC_CHECK(values.size() == tensors.size(), "{} tensors given for {} values", tensors.size(),
              values.size());
    entries_.reserve(values.size() + 1);
    for (size_t i = 0; i < values.size(); ++i) entries_.emplace_back(values[i], &tensors[i]);
  }

  // `value` now read from `tensor` (which outlives this), in place of what held it before.
  void set(const Value* value, const ConstTensorView* tensor) {
    for (auto& [held, view] : entries_)
      if (held == value) {
        view = tensor;
        return;
      }
    entries_.emplace_back(value, tensor);
  }

  const ConstTensorView& at(const Value* value) const {
    for (const auto& [held, view] : entries_)
      if (held == value) return *view;
    GXC_CHECK(false, "a step reads '{}', which is not among its tensors", value->name);
    return *entries_.front().second;  // not reached: GXC_CHECK throws
  }

 private:
  std::vector<std::pair<const Value*, const ConstTensorView*>> entries_;
};

}  // namespace gxc
