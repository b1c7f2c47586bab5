// Executes a placed graph on the host, op by op, in order.
//
// Two kernel sets: `Reference` runs every op through the plain reference interpreter (the
// oracle; fused kernels are computed op by op); `Cpu` is the `cpu` platform, which runs the
// graph's generated kernels (runtime/host/host_generated_kernels.h: built once, when the executor
// is made), GEMMs through OpenBLAS, and never materializes a fused kernel's internal values. Params
// are materialized once and stay resident; an activation is freed after its last use, so peak
// memory is that of a real run.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/param_init.h"
#include "tensor/tensor.h"

namespace gxc {

enum class HostKernels { Reference, Cpu };

struct HostRunStats {
  double milliseconds = 0;
  int64_t peakBytes = 0;      // params plus the largest set of live activations
  int64_t residentBytes = 0;  // params
};

class HostExecutor {
 public:
  // Requires every value placed on the host (after assign-devices on a host-only run).
  HostExecutor(const Graph& graph, HostKernels kernels);

  // `inputs` holds one tensor per graph input, by name, of the declared type. Returns the
  // outputs by their model names.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    HostRunStats* stats = nullptr);

  // The kernel cache's counts of the build of the generated kernels (`Cpu` only).
  KernelCacheStats kernelCacheStats() const;

 private:
  void materializeParams();

  const Graph& graph_;
  HostKernels kernels_;
  std::unique_ptr<HostGeneratedKernels> generated_;  // `Cpu` only
  WeightFiles weightFiles_;
  std::map<const Value*, Tensor> params_;
  std::map<const Value*, size_t> lastUse_;  // op index after which a value is dead
  // Fused kernels, counted in the peak as they will run (and as plan-memory plans them):
  // their inner values never, as a generated kernel keeps them in registers; their result
  // from their first member on, by op index. The members are still computed one by one.
  int64_t paramBytes_ = 0;
  bool paramsReady_ = false;
};

}  // namespace gxc
