#include "runtime/cuda/cuda_platform.h"

#include "runtime/cuda/cuda_executor.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/schedule.h"

namespace gxc {

namespace {

CudaConfig configOf(const CudaRunOptions& options) {
  CudaConfig config;
  config.deviceMap = options.deviceMap;
  config.memoryBytes = options.memoryBytes;
  config.launchBlocking = launchBlockingFromEnvironment();
  config.allowTf32 = allowTf32FromEnvironment();
  config.arch = options.arch;
  config.note = options.note;
  return config;
}

}  // namespace

struct CudaSession::Impl {
  Impl(const Graph& scheduled, CudaConfig config) : executor(scheduled, std::move(config)) {}
  CudaExecutor executor;
};

CudaSession::CudaSession(const Graph& scheduled, const CudaRunOptions& options)
    : impl_(std::make_unique<Impl>(scheduled, configOf(options))) {}

CudaSession::~CudaSession() = default;

std::map<std::string, Tensor> CudaSession::run(const std::map<std::string, Tensor>& inputs,
                                               CudaRunReport* report) {
  return impl_->executor.run(inputs, report);
}

std::map<std::string, Tensor> CudaSession::paramValues() { return impl_->executor.paramValues(); }

void CudaSession::setParamValues(const std::map<std::string, Tensor>& values) {
  impl_->executor.setParamValues(values);
}

KernelCacheStats CudaSession::kernelCache() const { return impl_->executor.kernelCacheStats(); }

CudaPlatformRun runOnCudaPlatform(const Graph& scheduled,
                                  const std::map<std::string, Tensor>& inputs,
                                  const CudaRunOptions& options) {
  CudaExecutor executor(scheduled, configOf(options));
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
