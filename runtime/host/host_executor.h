// Executes a placed, planned graph on the host: the `cpu` platform.
//
// What it does: runs the graph's steps (ir/kernel_steps.h) in program order with its generated
// kernels (runtime/host/host_generated_kernels.h: built once, when the executor is made) and
// GEMMs through oneDNN (f64: OpenBLAS); a fused kernel's inner values are never materialized, and a
// view is its operand's bytes, so it runs nothing. Every activation is written and read at the
// offset plan-memory gave it, in one arena (runtime/host_arena.h) of exactly the plan's size,
// allocated when the executor is made and reused by every run, so the memory a run uses is
// the plan's. Params are materialized once, at the first run, and stay resident; those no step
// writes keep, besides, a copy in the layout their GEMM or convolution prefers, made at their
// first use (constant_weights.h) and dropped when setParamValues overwrites them; inputs are
// read where the caller keeps them; outputs are copied out of the arena when the run ends.
// The oracle that runs every op through the reference interpreter is ReferenceExecutor
// (runtime/reference/reference_executor.h).
//
// Requires: every value placed on the host; a graph after plan-memory (one thread runs the ops
// in order, so streams are not needed).
// Guarantees: outputs equal the reference interpreter's within float tolerance. A failed run
// (an index out of range) throws a runtime error (exit 3) naming the layer; the executor can
// run again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "runtime/host/constant_weights.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/host_arena.h"
#include "runtime/memory_plan.h"
#include "runtime/param_init.h"
#include "tensor/tensor.h"

namespace gxc {

// A run stopped because its caller asked (HostExecutor::setInterruptCheck: a Ctrl-C in a
// Python program): not an error of the model or the devices; the executor can run again.
class RunInterrupted : public std::runtime_error {
 public:
  RunInterrupted() : std::runtime_error("the run was interrupted") {}
};

struct HostRunStats {
  double milliseconds = 0;
  int64_t peakBytes = 0;      // what the run held: params, inputs and the arena
  int64_t residentBytes = 0;  // params, and the packed copies of the constant ones
  int64_t arenaBytes = 0;     // the activations' arena, as allocated
};

class HostExecutor {
 public:
  // `launch`: how generated kernels run (emulating GPU blocks: --emulate-gpu-blocks).
  explicit HostExecutor(const Graph& graph, HostLaunchMode launch = {});

  // `inputs` holds one tensor per graph input, by name, of the declared type. Returns the
  // outputs by their model names.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    HostRunStats* stats = nullptr);
  // The same over views: the inputs are read where the caller keeps them, never copied.
  std::map<std::string, Tensor> run(const InputViews& inputs, HostRunStats* stats = nullptr);

  // The params by name, as they are now (runtime/param_init.h, paramValuesByName), and
  // overwriting them: what training saves and restores, and hands to the executor of its
  // last, smaller batch.
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);

  // Called between the steps of a run; when it returns true the run stops there and throws
  // RunInterrupted (the Python module's Ctrl-C). Null: never. A training step stopped so has
  // updated the params its finished steps assigned.
  void setInterruptCheck(std::function<bool()> interrupted) {
    interrupted_ = std::move(interrupted);
  }

  // The kernel cache's counts of the build of the generated kernels.
  KernelCacheStats kernelCacheStats() const { return generated_.cacheStats(); }

 private:
  // A step that runs, with the views of its operands and result made once: the arena's and the
  // params' bytes stay where they are from run to run, and only an operand in an input the
  // caller passes (`fromInputs`: its operand index, the input, the byte offset in it) is
  // pointed anew at each run. Making each view at every step cost the small models a hash
  // lookup and a shape's allocation per operand.
  struct BoundStep {
    struct InputOperand {
      size_t operand;
      const Value* input;
      int64_t offset;
    };
    const KernelStep* step;
    std::vector<ConstTensorView> operands;
    TensorView result;
    std::vector<InputOperand> fromInputs;
  };

  void materializeParams();
  void bindSteps();
  ConstTensorView viewOf(const Value* value, const InputViews& inputs) const;

  const Graph& graph_;
  MemoryPlan plan_;
  HostGeneratedKernels generated_;
  HostArena arena_;
  WeightFiles weightFiles_;
  std::map<const Value*, Tensor> params_;
  ConstantWeights constant_;  // the params no step writes, packed at their first use
  int64_t paramBytes_ = 0;
  bool paramsReady_ = false;
  std::vector<BoundStep> bound_;  // by bindSteps, after the params are materialized
  std::function<bool()> interrupted_;
};

}  // namespace gxc
