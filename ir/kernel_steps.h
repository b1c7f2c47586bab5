// The steps a placed graph executes: which ops form one kernel, and what each step reads.
//
// The `fuse` pass marks the members of one fused kernel with the same `kernel` attribute
// ("k0", "k1", ...): members are contiguous, on one device, and only the last member (the
// root) is read outside the kernel. Every other op is a step of its own. Executors and codegen
// both walk these steps, so they agree on what is computed where: an internal member is never
// materialized, and a step reads its inputs (the values from outside the kernel, in order of
// first use) when its root runs.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// What executes a step on the host and on GPUs.
enum class StepKind {
  Param,      // materialized once, not executed
  Gemm,       // matmul or linear by the BLAS library, maybe with a generated epilogue kernel
  Copy,       // copy (and a `to` left in the graph): bytes moved, no kernel
  View,       // reshape squeeze unsqueeze flatten, and slice along axis 0 with step 1: the same
              // bytes seen another way
  Generated,  // a generated kernel
  Conv,       // conv2d, conv_transpose2d: oneDNN on the host, cuDNN on GPUs; its generated
              // kernel is built too, the oracle the libraries are checked against
  Assign,     // assign(param, value): value's bytes copied into the param's own memory, which
              // is the result's (a training step's in-place update; no arena bytes)
};

struct KernelStep {
  StepKind kind;
  std::string kernelAttr;            // the members' `kernel` attribute; empty for a lone op
  std::vector<const Op*> ops;        // in program order; the root last
  std::vector<const Value*> inputs;  // values from outside the step, in order of first use
  const Op* root() const { return ops.back(); }
  const Op* first() const { return ops.front(); }
};

class KernelSteps {
 public:
  // Requires a verified graph whose `kernel` groups follow the representation above; a group
  // that does not is a gxc bug (the fuse pass made it).
  explicit KernelSteps(const Graph& graph);

  const std::vector<KernelStep>& steps() const { return steps_; }
  // The step whose root is `op`; null for an internal member of a fused kernel.
  const KernelStep* stepOfRoot(const Op* op) const;
  // The step that computes `op` (as root or member).
  const KernelStep& stepOf(const Op* op) const;

 private:
  size_t stepIndexOf(const Op* op) const;

  std::vector<KernelStep> steps_;
  std::unordered_map<const Op*, size_t> stepIndex_;
};

StepKind stepKindOf(const Op& op);
// Where a view's result lies in its operand's bytes: 0 for a reshape, the first row's byte
// for a slice along axis 0. Requires stepKindOf(view) == View.
int64_t viewByteOffset(const Op& view);
// GEMM ops: matmul and linear.
bool isGemm(OpKind kind);

}  // namespace gxc
