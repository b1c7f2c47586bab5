#include "runtime/cuda/cuda_platform.h"

#include "runtime/cuda/cuda_executor.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/schedule.h"

namespace gxc {

CudaPlatformRun runOnCudaPlatform(const Graph& scheduled,
                                  const std::map<std::string, Tensor>& inputs,
                                  const CudaRunOptions& options) {
  CudaConfig config;
  config.deviceMap = options.deviceMap;
  config.memoryBytes = options.memoryBytes;
  config.launchBlocking = launchBlockingFromEnvironment();
  config.allowTf32 = allowTf32FromEnvironment();
  config.arch = options.arch;
  config.note = options.note;
  CudaExecutor executor(scheduled, std::move(config));
  CudaPlatformRun run;
  run.outputs = executor.run(inputs, &run.report);
  for (int i = 0; i < options.iterations; ++i) {
    run.outputs = executor.run(inputs, &run.report);
    run.iterationMs.push_back(run.report.totalMs);
  }
  run.kernelCache = executor.kernelCacheStats();
  return run;
}

}  // namespace gxc
