#include "runtime/cuda/cuda_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_run_state.h"
#include "runtime/cuda/gpu_devices.h"
#include "runtime/host/host_generated_kernels.h"

namespace gxc {

std::optional<std::string> peerAccessRefused(int from, int to, cudaError_t status) {
  if (status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled) return std::nullopt;
  return fmt::format(
      "GPU {} cannot access GPU {}'s memory ({}); copies from GPU {} to GPU {} go through host "
      "memory",
      to, from, cudaGetErrorString(status), from, to);
}

CudaExecutor::CudaExecutor(const Graph& scheduled, CudaConfig config)
    : graph_(scheduled),
      config_(std::move(config)),
      schedule_(readSchedule(scheduled)),
      plan_(scheduled),
      steps_(scheduled) {
  int available = 0;
  checkCuda(cudaGetDeviceCount(&available), "counting GPUs");
  for (int gpu : config_.deviceMap)
    if (gpu < 0 || gpu >= available)
      usageError("--devices: there is no GPU {}; CUDA finds GPUs 0 to {}", gpu, available - 1);
  checkRunnable();
  checkArenaReuseOrdered(schedule_, plan_, steps_);
  planSteps();

  GXC_CHECK(config_.memoryBytes.empty() || config_.memoryBytes.size() == config_.deviceMap.size(),
            "{} GPU capacities for {} GPUs", config_.memoryBytes.size(), config_.deviceMap.size());
  std::optional<GpuArch> oldest;
  std::vector<GpuDeviceInfo> runGpus;
  for (int device : config_.deviceMap) {
    cudaDeviceProp properties{};
    checkCuda(cudaGetDeviceProperties(&properties, device), fmt::format("GPU {}", device));
    runGpus.push_back({device, properties.name, static_cast<int64_t>(properties.totalGlobalMem),
                       properties.major, properties.minor});
    if (!oldest || runGpus.back().computeCapability().number() < oldest->number())
      oldest = runGpus.back().computeCapability();
  }
  // As the driver refuses it (before the passes), for callers that come here directly.
  if (config_.arch) checkArchRunsOnGpus(*config_.arch, runGpus);
  for (size_t i = 0; i < config_.deviceMap.size(); ++i) {
    int device = config_.deviceMap[i];
    // Measured before the workspace below is allocated, which usableGpuMemory leaves out.
    int64_t capacity =
        config_.memoryBytes.empty() ? usableGpuMemory(device) : config_.memoryBytes[i];
    auto gpu = std::make_unique<Gpu>();
    gpu->cudaDevice = device;
    gpu->allocator =
        makeCudaCachingAllocator(Device::cuda(static_cast<int>(i)).str(), device, capacity);
    gpu->gemm = std::make_unique<CudaGemmRunner>(device, config_.allowTf32);
    if (config_.pretendNoGemmEpilogueAlgorithm) gpu->gemm->pretendNoEpilogueAlgorithmForTests();
    if (builtWithCudnn())
      gpu->conv = std::make_unique<CudnnConvRunner>(device, *gpu->allocator, config_.allowTf32);
    gpu->runStart = std::make_unique<CudaEvent>(device, /*timing=*/true);
    gpus_.push_back(std::move(gpu));
  }
  hostAllocator_ =
      std::make_unique<CachingAllocator>("cpu", std::numeric_limits<int64_t>::max() / 2);

  // Peer access both ways where the hardware has it (NVLink, or PCIe peer to peer).
  for (int from : config_.deviceMap)
    for (int to : config_.deviceMap) {
      if (from == to) continue;
      int canAccess = 0;
      checkCuda(cudaDeviceCanAccessPeer(&canAccess, to, from), "querying peer access");
      if (!canAccess) continue;
      CudaDeviceGuard guard(to);
      cudaError_t status = cudaDeviceEnablePeerAccess(from, 0);
      cudaGetLastError();  // neither answer may resurface at a later call
      if (std::optional<std::string> refused = peerAccessRefused(from, to, status)) {
        if (config_.note) config_.note(*refused);
        continue;  // these copies go through the host, as between GPUs without peer access
      }
      peers_.insert({from, to});
    }

  for (const ScheduledStream& stream : schedule_.streams) {
    bool onGpu = stream.device.isCuda();
    int device = onGpu ? config_.deviceMap.at(stream.device.index) : -1;
    streams_.push_back(onGpu ? std::make_unique<CudaStream>(device, stream.name) : nullptr);
    streamEnds_.push_back(onGpu ? std::make_unique<CudaEvent>(device, /*timing=*/true) : nullptr);
    bool copies = onGpu && stream.role != StreamRole::Compute;
    staging_.push_back(copies ? std::make_unique<CudaStagingBuffer>(config_.stagingChunkBytes)
                              : nullptr);
  }
  // An event lives on the GPU of the stream that records it (cudaEventRecord requires it).
  for (const ScheduledOp& op : schedule_.ops) {
    if (!op.record) continue;
    const CudaStream* stream = streams_[op.stream].get();
    events_[*op.record] = stream ? std::make_unique<CudaEvent>(stream->device()) : nullptr;
  }
  // One program for the graph, for an architecture every GPU of the run can run (PTX for an
  // older one is compiled by the driver for a newer GPU; not the other way round).
  // A fused GEMM's epilogue kernel is loaded too, for when cuBLASLt cannot apply it, and a
  // fused convolution's, which runs on the convolution's result.
  bool gpuKernels = false;
  for (const KernelStep& step : steps_.steps())
    gpuKernels |= step.root()->device().isCuda() &&
                  (step.kind == StepKind::Generated || step.kind == StepKind::Conv ||
                   (step.kind == StepKind::Gemm && step.ops.size() > 1));
  if (gpuKernels && oldest) {
    program_ = buildCudaProgram(graph_, config_.arch.value_or(*oldest), config_.cache);
    kernels_ = std::make_unique<CudaKernelLibrary>(program_.ptx);
  }
  for (const KernelStep& step : steps_.steps()) {
    if (!step.root()->device().isCuda()) continue;
    // A convolution's own kernel is keyed by the convolution, its first op, fused or not.
    const Op* computed = step.kind == StepKind::Conv ? step.first() : step.root();
    if (step.kind == StepKind::Generated || step.kind == StepKind::Conv)
      GXC_CHECK(program_.kernels.count(computed), "layer '{}' ({}): no generated kernel",
                computed->layerName(), opName(computed->kind));
    if ((step.kind == StepKind::Gemm || step.kind == StepKind::Conv) && step.ops.size() > 1)
      GXC_CHECK(program_.epilogues.count(step.root()), "layer '{}': no epilogue kernel",
                step.root()->layerName());
  }
}

CudaExecutor::~CudaExecutor() {
  for (const auto& stream : streams_)
    if (stream) cudaStreamSynchronize(stream->get());
  cudaGetLastError();
  params_.clear();  // blocks go with their allocators, which free every segment
}

void CudaExecutor::checkRunnable() const {
  for (const ScheduledOp& scheduled : schedule_.ops) {
    const Op& op = *scheduled.op;
    if (op.device().isCuda() && op.device().index >= static_cast<int>(config_.deviceMap.size()))
      runtimeError(op.loc, "layer '{}' is on {}, but the run has {} GPU(s)", op.layerName(),
                   op.device().str(), config_.deviceMap.size());
  }
}

void CudaExecutor::planSteps() {
  std::map<const Op*, size_t> issueIndex;
  for (size_t i = 0; i < schedule_.ops.size(); ++i) issueIndex[schedule_.ops[i].op] = i;
  auto extend = [&](const Value* value, size_t index) {
    auto last = schedule_.lastUse.find(value);
    if (last != schedule_.lastUse.end()) last->second = std::max(last->second, index);
  };
  for (const KernelStep& step : steps_.steps()) {
    const Op& root = *step.root();
    if (step.kind == StepKind::Param) continue;
    // A fused kernel reads its inputs when its root runs: they live until then.
    for (const Value* input : step.inputs) extend(input, issueIndex.at(&root));
    if (!root.device().isCuda()) continue;
    if (step.kind == StepKind::Gemm) gemms_[&root] = describeGemm(step);
    if (step.kind == StepKind::Conv) {
      const Op& op = *step.first();  // the convolution, fused or not
      CudnnConv& conv = convs_[&op] = {op.layerName(), cudnnConvGeometry(op)};
      if (builtWithCudnn() && !conv.geometry.viaCudnn() && config_.note)
        config_.note(fmt::format("layer '{}' ({}) runs as its generated kernel, not cuDNN: {}",
                                 op.layerName(), opName(op.kind), *conv.geometry.generatedBecause));
    }
    if (step.kind == StepKind::View) {
      const Value* base = root.operands[0];
      if (auto outer = viewBase_.find(base); outer != viewBase_.end()) base = outer->second;
      viewBase_[root.result] = base;
    }
  }
  indexChecks_ = planIndexChecks(graph_);
  // A view's bytes are its base's: the base lives as long as its last view is read.
  for (const auto& [view, base] : viewBase_) {
    auto last = schedule_.lastUse.find(view);
    if (last != schedule_.lastUse.end()) extend(base, last->second);
  }
}

void CudaExecutor::checkInputIndices(const std::map<std::string, Tensor>& inputs) const {
  for (const IndexCheck& check : indexChecks_)
    if (check.when == IndexCheckPoint::RunStart)
      checkDataIndices(*check.consumer,
                       boundInput(inputs, check.source->name, check.source->type).view());
}

const CudaGemmRunner::Stats& CudaExecutor::gemmStats(int gpu) const {
  return gpus_.at(static_cast<size_t>(gpu))->gemm->stats();
}

const CudnnConvRunner::Stats* CudaExecutor::cudnnConvStats(int gpu) const {
  const Gpu& found = *gpus_.at(static_cast<size_t>(gpu));
  return found.conv ? &found.conv->stats() : nullptr;
}

MemoryStats CudaExecutor::memoryStats(const Device& device) const {
  if (device.isCpu()) return hostAllocator_->stats();
  return gpus_.at(device.index)->allocator->stats();
}

void CudaExecutor::releaseCached() {
  for (auto& gpu : gpus_) gpu->allocator->releaseCached();
}

int64_t CudaExecutor::pinnedAllocations() const {
  int64_t count = 0;
  for (const auto& buffer : staging_)
    if (buffer) count += buffer->pinnedAllocations();
  return count;
}

std::map<const Value*, Tensor> CudaExecutor::downloadParams(
    const std::map<std::string, Tensor>* only) {
  if (!paramsReady_) uploadParams();
  std::map<const Value*, Tensor> values;
  for (const auto& [value, live] : params_) {
    if (only && !only->contains(value->producer->attrs.getString("name", value->name))) continue;
    if (live->host) {
      values.emplace(value, *live->host);
      continue;
    }
    Tensor tensor(value->type.dtype, value->type.shape);
    CudaDeviceGuard guard(gpus_.at(value->type.device.index)->cudaDevice);
    checkCuda(
        cudaMemcpy(tensor.data(), live->device, tensor.nbytes(), cudaMemcpyDeviceToHost),
        fmt::format("reading param '{}' back from {}", value->name, value->type.device.str()));
    values.emplace(value, std::move(tensor));
  }
  return values;
}

std::map<std::string, Tensor> CudaExecutor::paramValues() {
  return paramValuesByName(downloadParams());
}

void CudaExecutor::setParamValues(const std::map<std::string, Tensor>& values) {
  std::map<const Value*, Tensor> params = downloadParams(&values);
  overwriteParams(params, values);
  for (auto& [value, tensor] : params) {
    Live& live = *params_.at(value);
    if (live.host) {
      *live.host = std::move(tensor);
      continue;
    }
    CudaDeviceGuard guard(gpus_.at(value->type.device.index)->cudaDevice);
    checkCuda(cudaMemcpy(live.device, tensor.data(), tensor.nbytes(), cudaMemcpyHostToDevice),
              fmt::format("writing param '{}' to {}", value->name, value->type.device.str()));
  }
}

void CudaExecutor::uploadParams() {
  try {
    for (const Op* param : schedule_.params) {
      auto live = std::make_unique<Live>();
      Tensor value = materializeParam(*param, weightFiles_);
      const Device& device = param->device();
      std::string purpose = fmt::format("param '{}'", param->layerName());
      if (device.isCpu()) {
        live->allocator = hostAllocator_.get();
        live->block = live->allocator->allocate(param->result->type.bytes(), purpose, param->loc);
        live->host = std::make_shared<Tensor>(std::move(value));
      } else {
        Gpu& gpu = *gpus_.at(device.index);
        live->allocator = gpu.allocator.get();
        live->block = live->allocator->allocate(param->result->type.bytes(), purpose, param->loc);
        live->device = live->block.address;
        CudaDeviceGuard guard(gpu.cudaDevice);
        checkCuda(cudaMemcpy(live->device, value.data(), value.nbytes(), cudaMemcpyHostToDevice),
                  fmt::format("uploading param '{}' to {}", param->layerName(), device.str()));
      }
      params_[param->result] = std::move(live);
    }
    // A cudaMemcpy from pageable memory may return before its DMA ends, and the run's
    // streams do not wait for the legacy stream: wait here, once.
    for (const auto& gpu : gpus_) {
      CudaDeviceGuard guard(gpu->cudaDevice);
      checkCuda(cudaDeviceSynchronize(),
                fmt::format("uploading params to GPU {}", gpu->cudaDevice));
    }
  } catch (...) {
    for (auto& [value, live] : params_) live->allocator->free(live->block);
    params_.clear();
    throw;
  }
  paramsReady_ = true;
}

void CudaExecutor::reserveArenas() {
  // Every GPU's arena or none: what was reserved goes back if one does not fit.
  try {
    for (size_t i = 0; i < gpus_.size(); ++i) {
      Gpu& gpu = *gpus_[i];
      gpu.arena = gpu.allocator->allocateArena(
          plan_.arenaBytes(Device::cuda(static_cast<int>(i))),
          fmt::format("the activations' arena of graph '{}'", graph_.name()));
    }
  } catch (...) {
    for (auto& gpu : gpus_) {
      gpu->allocator->free(gpu->arena);
      gpu->arena = {};
    }
    throw;
  }
  arenasReady_ = true;
}

std::map<std::string, Tensor> CudaExecutor::run(const std::map<std::string, Tensor>& inputs,
                                                CudaRunReport* report) {
  if (!paramsReady_) uploadParams();
  if (!arenasReady_) reserveArenas();
  hostAllocator_->resetPeaks();
  RunState state;
  auto deviceReport = [](std::string name, int gpu) {
    CudaDeviceReport device;
    device.device = std::move(name);
    device.gpu = gpu;
    return device;
  };
  state.devices.push_back(deviceReport("cpu", -1));
  for (size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& gpu = *gpus_[i];
    gpu.allocator->resetPeaks();
    state.devices.push_back(deviceReport(Device::cuda(static_cast<int>(i)).str(), gpu.cudaDevice));
  }
  // Every stream of a GPU starts after its start event (recorded on the GPU's first
  // stream), so the device's time is measured from one point.
  std::vector<bool> started(gpus_.size(), false);
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!streams_[s]) continue;
    size_t gpu = static_cast<size_t>(schedule_.streams[s].device.index);
    if (!started[gpu])
      gpus_[gpu]->runStart->record(*streams_[s]);
    else
      gpus_[gpu]->runStart->waitOn(*streams_[s]);
    started[gpu] = true;
  }

  std::exception_ptr failure;
  try {
    checkInputIndices(inputs);
    for (const Value* input : graph_.inputs()) placeInput(state, input, inputs);
    for (size_t i = 0; i < schedule_.ops.size(); ++i) issue(state, i);
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    finish(state);
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  std::map<std::string, Tensor> outputs;
  if (!failure) {
    // A host tensor this run made and nothing else holds is moved out, unless another output
    // names the same value; the caller's inputs and the params' values are copied.
    std::map<const Value*, int> namings;
    for (const GraphOutput& output : graph_.outputs()) ++namings[output.value];
    for (const GraphOutput& output : graph_.outputs()) {
      auto made = state.live.find(output.value);
      bool movable = made != state.live.end() && made->second.host.use_count() == 1 &&
                     --namings[output.value] == 0;
      outputs[output.name] =
          movable ? std::move(*made->second.host) : *liveOf(state, output.value).host;
    }
  }
  for (auto& [value, live] : state.live)
    if (live.allocator) live.allocator->free(live.block);
  state.live.clear();
  if (failure) std::rethrow_exception(failure);
  if (report) {
    report->devices = state.devices;
    report->totalMs = state.devices[0].ms;
    report->devices[0].memory = hostAllocator_->stats();
    for (size_t i = 0; i < gpus_.size(); ++i)
      report->devices[i + 1].memory = gpus_[i]->allocator->stats();
  }
  return outputs;
}

}  // namespace gxc
