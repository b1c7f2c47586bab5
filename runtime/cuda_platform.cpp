#include "runtime/cuda_platform.h"

#include "runtime/cuda_executor.h"
#include "runtime/cuda_gemm.h"
#include "runtime/gpu_devices.h"
#include "runtime/sim_executor.h"

namespace gxc {
namespace {

// The graph's generated kernels for the run's GPUs. Kernel generation (codegen/cuda_source)
// is not part of this build yet, so there are none: GEMMs and copies run, and an op that
// needs a kernel is refused by the executor. With it, this compiles the graph's source once
// per architecture (codegen/nvrtc_compiler.h, through the kernel cache).
CudaProgram buildCudaProgram(const Graph& scheduled, const GpuArch& arch) { return {}; }

GpuArch archOf(const CudaRunOptions& options) {
  if (options.arch) return *options.arch;
  const GpuDeviceInfo& first = enumerateGpus().gpus.at(options.deviceMap.at(0));
  return GpuArch{first.major, first.minor, ""};
}

}  // namespace

CudaPlatformRun runOnCudaPlatform(const Graph& scheduled,
                                  const std::map<std::string, Tensor>& inputs,
                                  const CudaRunOptions& options) {
  CudaConfig config;
  config.deviceMap = options.deviceMap;
  config.launchBlocking = launchBlockingFromEnvironment();
  config.allowTf32 = allowTf32FromEnvironment();
  config.program = buildCudaProgram(scheduled, archOf(options));
  CudaExecutor executor(scheduled, std::move(config));
  CudaPlatformRun run;
  run.outputs = executor.run(inputs, &run.report);
  for (int i = 0; i < options.iterations; ++i) {
    run.outputs = executor.run(inputs, &run.report);
    run.iterationMs.push_back(run.report.totalMs);
  }
  return run;
}

}  // namespace gxc
