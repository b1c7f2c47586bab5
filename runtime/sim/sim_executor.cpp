#include "runtime/sim/sim_executor.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/ranges.h>

#include "runtime/sim/sim_run_state.h"
#include "target/byte_size.h"

namespace gxc {
SimExecutor::SimExecutor(const Graph& scheduled, SimConfig config)
    : graph_(scheduled),
      config_(std::move(config)),
      schedule_(readSchedule(scheduled)),
      plan_(scheduled),
      staging_(config_.stagingChunkBytes) {
  if (config_.gpus < 1) usageError("--sim-gpus needs at least 1 GPU, not {}", config_.gpus);
  if (config_.memoryPerGpu <= 0) usageError("--sim-gpus: GPU memory must be positive");
  if (config_.deviceMap.empty())
    for (int gpu = 0; gpu < config_.gpus; ++gpu) config_.deviceMap.push_back(gpu);
  std::set<int> used;
  for (int gpu : config_.deviceMap) {
    if (gpu < 0 || gpu >= config_.gpus)
      usageError("--devices: GPU {} does not exist (--sim-gpus {} gives GPUs 0 to {})", gpu,
                 config_.gpus, config_.gpus - 1);
    if (!used.insert(gpu).second) usageError("--devices: GPU {} is listed twice", gpu);
  }
  int cudaDevices = static_cast<int>(config_.deviceMap.size());
  std::vector<std::string> runDevices;
  for (int i = 0; i < cudaDevices; ++i) runDevices.push_back(Device::cuda(i).str());
  auto checkDevice = [&](const Device& device, const std::string& what, const SourceLoc& loc) {
    if (device.isCuda() && device.index >= cudaDevices)
      runtimeError(loc, "{} is on {}, but the run has only cpu, {}", what, device.str(),
                   fmt::join(runDevices, ", "));
  };
  for (const Value* input : graph_.inputs())
    checkDevice(input->type.device, fmt::format("input '{}'", input->name), input->loc);
  for (const Op* op : graph_.ops())
    checkDevice(op->device(), fmt::format("layer '{}'", op->layerName()), op->loc);

  // The host's memory is accounted (for the report) but not limited here: a host run that
  // cannot hold its params is refused before anything is allocated (uploadParams).
  hostAllocator_ =
      std::make_unique<CachingAllocator>("cpu", std::numeric_limits<int64_t>::max() / 2);
  for (int i = 0; i < cudaDevices; ++i)
    gpuAllocators_.push_back(
        std::make_unique<CachingAllocator>(Device::cuda(i).str(), config_.memoryPerGpu));
  for (int64_t id : schedule_.events) events_[id] = std::make_unique<SimEvent>();
  generated_ = std::make_unique<HostGeneratedKernels>(graph_, KernelCache::fromEnvironment(),
                                                      config_.launch);
  checkArenaReuseOrdered(schedule_, plan_, generated_->steps());
  for (const ScheduledStream& stream : schedule_.streams)
    streams_.push_back(std::make_unique<SimStream>(stream.name));
}

SimExecutor::~SimExecutor() {
  // Let every queued task finish before the buffers and events they use go away.
  std::exception_ptr ignored;
  synchronizeAll(ignored);
}

CachingAllocator& SimExecutor::allocatorFor(const Device& device) const {
  if (device.isCpu()) return *hostAllocator_;
  GXC_CHECK(device.isCuda() && device.index < static_cast<int>(gpuAllocators_.size()),
            "no allocator for {}", device.str());
  return *gpuAllocators_[device.index];
}

int SimExecutor::virtualGpu(const Device& device) const {
  return device.isCuda() ? config_.deviceMap.at(device.index) : -1;
}

MemoryStats SimExecutor::memoryStats(const Device& device) const {
  return allocatorFor(device).stats();
}

void SimExecutor::releaseCached() {
  hostAllocator_->releaseCached();
  for (auto& allocator : gpuAllocators_) allocator->releaseCached();
}

Tensor SimExecutor::upload(const Tensor& host, const Device& device) {
  if (device.isCpu()) return host;
  Tensor uploaded(host.dtype(), host.shape());
  staging_.copy(virtualGpu(device), CopyDirection::HostToDevice, host.data(), uploaded.data(),
                host.nbytes());
  return uploaded;
}

std::map<std::string, Tensor> SimExecutor::paramValues() {
  if (!paramsReady_) uploadParams();
  return paramValuesByName(params_);
}

void SimExecutor::setParamValues(const std::map<std::string, Tensor>& values) {
  if (!paramsReady_) uploadParams();
  overwriteParams(params_, values);
}

void SimExecutor::uploadParams() {
  // As HostExecutor does: refuse up front what the host cannot hold, since the virtual GPUs'
  // data lives in host memory and the OOM killer, not an error, would end the run.
  int64_t needed = 0;
  for (const Op* param : schedule_.params) needed += param->result->type.bytes();
  for (const auto& [device, bytes] : plan_.arenas()) needed += bytes;
  int64_t available = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (available > 0 && needed > available)
    runtimeError({},
                 "the model's params and activations need {} of host memory to simulate, which "
                 "has {} free",
                 formatBytes(needed), formatBytes(available));
  try {
    for (const Op* param : schedule_.params) {
      const Device& device = param->device();
      CachingAllocator& allocator = allocatorFor(device);
      CachingAllocator::Block block = allocator.allocate(
          param->result->type.bytes(), fmt::format("param '{}'", param->layerName()), param->loc);
      paramBlocks_.emplace_back(&allocator, block);
      params_[param->result] = upload(materializeParam(*param, weightFiles_), device);
      paramUploadBytes_[device.str()] += param->result->type.bytes();
    }
  } catch (...) {
    for (auto& [allocator, block] : paramBlocks_) allocator->free(block);
    paramBlocks_.clear();
    params_.clear();
    paramUploadBytes_.clear();
    throw;
  }
  paramsReady_ = true;
}

void SimExecutor::reserveArenas() {
  // Device by device, in the plan's order (cpu, cuda:0, ...); every arena or none.
  std::vector<Arena> arenas;
  try {
    for (const auto& [device, bytes] : plan_.arenas()) {
      Arena arena;
      arena.allocator = &allocatorFor(device);
      arena.block = arena.allocator->allocateArena(
          bytes, fmt::format("the activations' arena of graph '{}'", graph_.name()));
      arena.data = HostArena(bytes);
      arenas.push_back(std::move(arena));
    }
  } catch (...) {
    for (Arena& arena : arenas) arena.allocator->free(arena.block);
    throw;
  }
  arenas_ = std::move(arenas);
  arenasReady_ = true;
}

void SimExecutor::placeInputs(RunState& state, const std::map<std::string, Tensor>& inputs) {
  for (const Value* input : graph_.inputs()) {
    const Tensor& tensor = boundInput(inputs, input->name, input->type);
    const Device& device = input->type.device;
    RunState::Input& placed = state.inputs[input];
    placed.allocator = &allocatorFor(device);
    placed.block = placed.allocator->allocate(input->type.bytes(),
                                              fmt::format("input '{}'", input->name), input->loc);
    if (device.isCpu()) {
      placed.data = tensor.view();  // the caller's tensor outlives the run
    } else {
      placed.uploaded = upload(tensor, device);
      placed.data = placed.uploaded.view();
      state.device(device).uploadedBytes += input->type.bytes();
    }
  }
}

ConstTensorView SimExecutor::viewOf(const RunState& state, const Value* value) const {
  const Placement& placement = plan_.placementOf(value);
  const std::byte* base = nullptr;
  switch (placement.storage) {
    case Storage::Arena:
      return resultOf(value);
    case Storage::Param:
      base = params_.at(placement.base).data();
      break;
    case Storage::Input:
      base = state.inputs.at(placement.base).data.data();
      break;
    case Storage::Nowhere:
      GXC_CHECK(false, "'{}', a fused kernel's inner value, is read outside it", value->name);
  }
  return {value->type.dtype, value->type.shape,
          placement.bytes == 0 ? nullptr : base + placement.offset};
}

TensorView SimExecutor::resultOf(const Value* value) const {
  const Placement& placement = plan_.placementOf(value);
  if (placement.storage == Storage::Param) {  // an assign: the param's new value, in place
    // The executor owns its params' memory; assign steps are the only writers of it.
    const Tensor& param = params_.at(placement.base);
    return {param.dtype(), param.shape(), const_cast<std::byte*>(param.data())};
  }
  GXC_CHECK(placement.storage == Storage::Arena, "'{}' is written, but has no arena bytes",
            value->name);
  // arenas_ holds one arena per entry of plan_.arenas(), in its order.
  for (size_t i = 0; i < arenas_.size(); ++i)
    if (plan_.arenas()[i].first == placement.device)
      return arenas_[i].data.view(value, placement.offset);
  GXC_CHECK(false, "no arena reserved on {}", placement.device.str());
  return {};
}

double SimExecutor::simulatedSeconds(const KernelStep& step) const {
  const Op& op = *step.root();
  if (op.kind != OpKind::Copy) return simStepSeconds(step, op.device(), config_.costs);
  CopyDirection direction = copyDirection(op.operands[0]->type.device, op.device());
  int64_t bytes = op.result->type.bytes();
  return simStagedCopySeconds(direction, bytes, config_.stagingChunkBytes, config_.costs);
}

void SimExecutor::issue(RunState& state, size_t index) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op& op = *scheduled.op;
  const KernelStep& step = generated_->steps().stepOf(&op);

  // A fused kernel is one launch, timed and drawn when its root is issued: its earlier
  // members only hold the stream for the events they wait for (assign-streams gives a
  // kernel's waits to its first member), which the kernel's span then shows.
  double start = state.streamClock[scheduled.stream];
  for (int64_t event : scheduled.waits) start = std::max(start, state.eventTime.at(event));
  state.kernelWaits.insert(state.kernelWaits.end(), scheduled.waits.begin(), scheduled.waits.end());
  double seconds = step.root() == &op ? simulatedSeconds(step) : 0.0;
  state.streamClock[scheduled.stream] = start + seconds;
  if (scheduled.record) state.eventTime[*scheduled.record] = start + seconds;
  if (step.root() == &op) {
    state.account(schedule_, index, start, seconds, step);
    state.kernelWaits.clear();
  }

  enqueue(state, index);
  if (config_.launchBlocking) {
    try {
      streams_[scheduled.stream]->synchronize();
    } catch (const KernelFailure& failure) {
      std::rethrow_exception(describeFailure(failure.opIndex, failure.original, true));
    }
  }
}

void SimExecutor::enqueue(RunState& state, size_t index) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op* op = scheduled.op;
  SimStream& stream = *streams_[scheduled.stream];
  for (int64_t event : scheduled.waits) stream.wait(*events_.at(event));
  const KernelStep* step = generated_->steps().stepOfRoot(op);
  // An internal member of a fused kernel (its root computes it), or a view (its operand's
  // bytes already): nothing to run but the events.
  if (!step || step->kind == StepKind::View) {
    if (scheduled.record) stream.record(*events_.at(*scheduled.record));
    return;
  }

  std::vector<ConstTensorView> operands;
  for (const Value* operand : step->inputs) operands.push_back(viewOf(state, operand));
  TensorView result = resultOf(op->result);
  // Host<->device copies go through the pinned staging buffer of the GPU side.
  int stagingGpu = -1;
  CopyDirection direction = CopyDirection::HostToHost;
  if (op->kind == OpKind::Copy) {
    const Device& from = op->operands[0]->type.device;
    direction = copyDirection(from, op->device());
    if (direction == CopyDirection::HostToDevice) stagingGpu = virtualGpu(op->device());
    if (direction == CopyDirection::DeviceToHost) stagingGpu = virtualGpu(from);
  }
  SimStagingBuffers* staging = &staging_;
  const HostGeneratedKernels* generated = generated_.get();
  // The task reads and writes the bytes of the arenas, params and inputs in place: they
  // outlive every task of the run (run() drains the streams before it returns), and the
  // schedule's events order every reuse of arena bytes after their last reader.
  stream.enqueue([step, generated, operands = std::move(operands), result = std::move(result),
                  staging, stagingGpu, direction, index] {
    try {
      if (stagingGpu >= 0)
        staging->copy(stagingGpu, direction, operands[0].data(), result.data(), result.nbytes());
      else
        generated->run(*step, operands, result);
    } catch (...) {
      throw KernelFailure(index, std::current_exception());
    }
  });
  if (scheduled.record) stream.record(*events_.at(*scheduled.record));
}

void SimExecutor::freeInputs(RunState& state) {
  for (auto& [value, input] : state.inputs) input.allocator->free(input.block);
  state.inputs.clear();
}

std::map<std::string, Tensor> SimExecutor::run(const std::map<std::string, Tensor>& inputs,
                                               SimRunReport* report) {
  if (!paramsReady_) uploadParams();
  if (!arenasReady_) reserveArenas();
  hostAllocator_->resetPeaks();
  for (auto& allocator : gpuAllocators_) allocator->resetPeaks();
  RunState state(schedule_, config_.deviceMap);
  std::exception_ptr failure;
  try {
    placeInputs(state, inputs);
    for (size_t i = 0; i < schedule_.ops.size(); ++i) issue(state, i);
  } catch (...) {
    failure = std::current_exception();
  }
  synchronizeAll(failure);
  if (failure) {
    freeInputs(state);
    std::rethrow_exception(failure);
  }
  std::map<std::string, Tensor> outputs;
  for (const GraphOutput& output : graph_.outputs())
    outputs[output.name] = Tensor(viewOf(state, output.value));
  freeInputs(state);
  if (report) state.fillReport(*report, *this);
  return outputs;
}

}  // namespace gxc
