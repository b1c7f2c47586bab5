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
  generated_ = std::make_unique<HostGeneratedKernels>(graph_);
  // A fused kernel reads its inputs when its root runs: they live until then.
  std::map<const Op*, size_t> issueIndex;
  for (size_t i = 0; i < schedule_.ops.size(); ++i) issueIndex[schedule_.ops[i].op] = i;
  for (const KernelStep& step : generated_->steps().steps()) {
    if (step.kind == StepKind::Param) continue;
    for (const Value* input : step.inputs) {
      auto last = schedule_.lastUse.find(input);
      if (last != schedule_.lastUse.end())
        last->second = std::max(last->second, issueIndex.at(step.root()));
    }
  }
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

std::shared_ptr<SimExecutor::Buffer> SimExecutor::upload(const Tensor& host, const Device& device) {
  auto buffer = std::make_shared<Buffer>();
  if (device.isCpu()) {
    buffer->tensor = host;
    return buffer;
  }
  buffer->tensor = Tensor(host.dtype(), host.shape());
  staging_.copy(virtualGpu(device), CopyDirection::HostToDevice, host.data(), buffer->tensor.data(),
                host.nbytes());
  return buffer;
}

void SimExecutor::uploadParams() {
  // As HostExecutor does: refuse up front what the host cannot hold, since the virtual GPUs'
  // data lives in host memory and the OOM killer, not an error, would end the run.
  int64_t needed = 0;
  for (const Op* param : schedule_.params) needed += param->result->type.bytes();
  int64_t available = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (available > 0 && needed > available)
    runtimeError({}, "the model's params need {} of host memory to simulate, which has {} free",
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

void SimExecutor::placeInputs(RunState& state, const std::map<std::string, Tensor>& inputs) {
  for (const Value* input : graph_.inputs()) {
    const Tensor& tensor = boundInput(inputs, input->name, input->type);
    const Device& device = input->type.device;
    CachingAllocator& allocator = allocatorFor(device);
    CachingAllocator::Block block =
        allocator.allocate(input->type.bytes(), fmt::format("input '{}'", input->name), input->loc);
    state.live[input] = {nullptr, &allocator, block};
    state.live[input].data = upload(tensor, device);
    if (device.isCuda()) state.device(device).uploadedBytes += input->type.bytes();
    freeIfDead(state, input, std::numeric_limits<size_t>::max());
  }
}

std::shared_ptr<const SimExecutor::Buffer> SimExecutor::bufferOf(const RunState& state,
                                                                 const Value* value) const {
  if (auto param = params_.find(value); param != params_.end()) return param->second;
  auto live = state.live.find(value);
  GXC_CHECK(live != state.live.end(), "value '{}' is read after it was freed", value->name);
  return live->second.data;
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
  // Memory first, as a CUDA framework allocates before it launches: if the result does not
  // fit, nothing of this op is issued and the error names it. A fused kernel's internal
  // values have no memory.
  if (step.root() == &op) {
    CachingAllocator& allocator = allocatorFor(op.device());
    CachingAllocator::Block block = allocator.allocate(
        op.result->type.bytes(), fmt::format("layer '{}'", op.layerName()), op.loc);
    state.live[op.result] = {std::make_shared<Buffer>(), &allocator, block};
  }

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
  std::vector<const Value*> reads =
      step.root() == &op ? step.inputs
                         : std::vector<const Value*>(op.operands.begin(), op.operands.end());
  for (const Value* operand : reads) freeIfDead(state, operand, index);
  freeIfDead(state, op.result, index);
}

void SimExecutor::enqueue(RunState& state, size_t index) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op* op = scheduled.op;
  SimStream& stream = *streams_[scheduled.stream];
  for (int64_t event : scheduled.waits) stream.wait(*events_.at(event));
  const KernelStep* step = generated_->steps().stepOfRoot(op);
  if (!step) {  // an internal member of a fused kernel: its root computes it
    if (scheduled.record) stream.record(*events_.at(*scheduled.record));
    return;
  }

  std::vector<std::shared_ptr<const Buffer>> operands;
  for (const Value* operand : step->inputs) operands.push_back(bufferOf(state, operand));
  std::shared_ptr<Buffer> result = state.live.at(op->result).data;
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
  // The task owns what it reads and writes (shared buffers), so freeing a value's memory
  // in program order never pulls data from under a stream that still has to read it.
  stream.enqueue([step, generated, operands = std::move(operands), result, staging, stagingGpu,
                  direction, index] {
    try {
      std::vector<const Tensor*> tensors;
      for (const auto& operand : operands) tensors.push_back(&operand->tensor);
      if (stagingGpu >= 0) {
        const Tensor& source = *tensors[0];
        Tensor moved(source.dtype(), source.shape());
        staging->copy(stagingGpu, direction, source.data(), moved.data(), source.nbytes());
        result->tensor = std::move(moved);
      } else {
        result->tensor = generated->run(*step, tensors);
      }
    } catch (...) {
      throw KernelFailure(index, std::current_exception());
    }
  });
  if (scheduled.record) stream.record(*events_.at(*scheduled.record));
}

void SimExecutor::freeIfDead(RunState& state, const Value* value, size_t index) {
  auto it = state.live.find(value);
  if (it == state.live.end()) return;
  auto last = schedule_.lastUse.find(value);
  if (last != schedule_.lastUse.end() && last->second != index) return;
  it->second.allocator->free(it->second.block);
  state.live.erase(it);
}

void SimExecutor::freeRunMemory(RunState& state) {
  for (auto& [value, live] : state.live) live.allocator->free(live.block);
  state.live.clear();
}

std::map<std::string, Tensor> SimExecutor::run(const std::map<std::string, Tensor>& inputs,
                                               SimRunReport* report) {
  if (!paramsReady_) uploadParams();
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
    freeRunMemory(state);
    std::rethrow_exception(failure);
  }
  std::map<std::string, Tensor> outputs;
  for (const GraphOutput& output : graph_.outputs())
    outputs[output.name] = bufferOf(state, output.value)->tensor;
  freeRunMemory(state);
  if (report) state.fillReport(*report, *this);
  return outputs;
}

}  // namespace gxc
