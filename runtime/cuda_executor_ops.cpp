// The cuda executor, op by op: memory, waits, the work itself, records, and frees.
#include <fmt/format.h>

#include <limits>

#include "runtime/cpu_gemm.h"
#include "runtime/cuda_check.h"
#include "runtime/cuda_run_state.h"
#include "runtime/reference_ops.h"

namespace gxc {

const CudaExecutor::Live& CudaExecutor::liveOf(const RunState& state, const Value* value) const {
  if (auto param = params_.find(value); param != params_.end()) return *param->second;
  auto live = state.live.find(value);
  GXC_CHECK(live != state.live.end(), "value '{}' is read after it was freed", value->name);
  return live->second;
}

void CudaExecutor::allocateResult(RunState& state, const Op& op) {
  std::string purpose = fmt::format("layer '{}'", op.layerName());
  Live& live = state.live[op.result];
  if (op.device().isCpu()) {  // a host op, or a copy to the host
    live.allocator = hostAllocator_.get();
    live.block = live.allocator->allocate(op.result->type.bytes(), purpose, op.loc);
    return;
  }
  CachingAllocator& allocator = *gpus_.at(op.device().index)->allocator;
  reapFrees(state, /*wait=*/false);
  CachingAllocator::Block block;
  try {
    block = allocator.allocate(op.result->type.bytes(), purpose, op.loc);
  } catch (const Error&) {
    // Blocks still in use by a stream may be what is missing: wait for them, then retry.
    if (state.pendingFrees.empty()) throw;
    reapFrees(state, /*wait=*/true);
    block = allocator.allocate(op.result->type.bytes(), purpose, op.loc);
  }
  live.allocator = &allocator;
  live.block = block;
  live.device = block.address;
}

void CudaExecutor::placeInput(RunState& state, const Value* input,
                              const std::map<std::string, Tensor>& inputs) {
  const Tensor& tensor = boundInput(inputs, input->name, input->type);
  const Device& device = input->type.device;
  Live& live = state.live[input];
  std::string purpose = fmt::format("input '{}'", input->name);
  if (device.isCpu()) {
    live.allocator = hostAllocator_.get();
    live.block = live.allocator->allocate(input->type.bytes(), purpose, input->loc);
    live.host = std::make_shared<Tensor>(tensor);
  } else {
    Gpu& gpu = *gpus_.at(device.index);
    live.allocator = gpu.allocator.get();
    live.block = live.allocator->allocate(input->type.bytes(), purpose, input->loc);
    live.device = live.block.address;
    CudaDeviceGuard guard(gpu.cudaDevice);
    checkCuda(cudaMemcpy(live.device, tensor.data(), tensor.nbytes(), cudaMemcpyHostToDevice),
              fmt::format("uploading input '{}' to {}", input->name, device.str()));
    // As for params (CudaExecutor::uploadParams): the DMA may still be running.
    checkCuda(cudaDeviceSynchronize(), fmt::format("uploading input '{}'", input->name));
  }
  freeIfDead(state, input, std::numeric_limits<size_t>::max());
}

void CudaExecutor::issue(RunState& state, size_t index) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op& op = *scheduled.op;
  CudaStream* stream = streams_[scheduled.stream].get();
  for (int64_t event : scheduled.waits) {
    if (state.hostRecorded.count(event)) continue;  // the host op is done already
    if (stream)
      events_.at(event)->waitOn(*stream);
    else
      events_.at(event)->synchronize();
  }
  allocateResult(state, op);
  Live& live = state.live.at(op.result);
  if (stream) {
    CudaDeviceGuard guard(stream->device());
    execute(state, index, live);
    live.streams.insert(scheduled.stream);
    for (const Value* operand : op.operands)
      if (!params_.count(operand)) state.live.at(operand).streams.insert(scheduled.stream);
    if (scheduled.record) events_.at(*scheduled.record)->record(*stream);
    if (config_.launchBlocking) {
      try {
        stream->synchronize();
      } catch (const Error& error) {
        runtimeError(op.loc, "layer '{}' on {}: {}", op.layerName(), op.device().str(),
                     error.message());
      }
    }
  } else {
    execute(state, index, live);
    if (scheduled.record) state.hostRecorded.insert(*scheduled.record);
  }
  for (const Value* operand : op.operands) freeIfDead(state, operand, index);
  freeIfDead(state, op.result, index);
}

void CudaExecutor::execute(RunState& state, size_t index, Live& result) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op& op = *scheduled.op;
  if (op.kind == OpKind::Copy) return copy(state, index, result);
  if (op.device().isCpu()) {
    // The host: OpenBLAS for GEMMs, the reference kernels for the rest (as `cpu` runs them).
    std::vector<const Tensor*> operands;
    for (const Value* operand : op.operands) operands.push_back(liveOf(state, operand).host.get());
    Tensor value = op.kind == OpKind::Matmul   ? cpuMatmul(op, operands)
                   : op.kind == OpKind::Linear ? cpuLinear(op, operands)
                                               : evaluateReferenceOp(op, operands);
    result.host = std::make_shared<Tensor>(std::move(value));
    return;
  }
  CudaStream& stream = *streams_[scheduled.stream];
  std::vector<void*> pointers = {result.device};
  for (const Value* operand : op.operands) pointers.push_back(liveOf(state, operand).device);
  if (std::optional<CudaGemm> gemm = describeGemm(op)) {
    const void* bias = gemm->bias ? pointers[3] : nullptr;
    gpus_.at(op.device().index)
        ->gemm->run(*gemm, pointers[1], pointers[2], bias, result.device, stream.get());
    return;
  }
  GXC_CHECK(kernels_, "layer '{}': no kernels loaded", op.layerName());
  kernels_->launch(config_.program.kernels.at(&op), pointers, stream);
}

void CudaExecutor::copy(RunState& state, size_t index, Live& result) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const Op& op = *scheduled.op;
  const Device& from = op.operands[0]->type.device;
  const Device& to = op.device();
  const Live& source = liveOf(state, op.operands[0]);
  CudaStream& stream = *streams_[scheduled.stream];
  CudaStagingBuffer& staging = *staging_[scheduled.stream];
  int64_t bytes = op.result->type.bytes();
  if (from.isCpu()) {
    staging.toDevice(stream, source.host, result.device);
  } else if (to.isCpu()) {
    result.host = std::make_shared<Tensor>(op.result->type.dtype, op.result->type.shape);
    staging.toHost(stream, source.device, result.host);
  } else {
    int fromGpu = gpus_.at(from.index)->cudaDevice, toGpu = gpus_.at(to.index)->cudaDevice;
    if (peerToPeer(fromGpu, toGpu))
      checkCuda(
          cudaMemcpyPeerAsync(result.device, toGpu, source.device, fromGpu,
                              static_cast<size_t>(bytes), stream.get()),
          fmt::format("layer '{}': copy from {} to {}", op.layerName(), from.str(), to.str()));
    else
      staging.throughHost(stream, source.device, result.device, bytes);
  }
  state.report(from).bytesCopiedOut += bytes;
  state.report(from).copiesOut += 1;
  state.report(to).bytesCopiedIn += bytes;
  state.report(to).copiesIn += 1;
}

void CudaExecutor::freeIfDead(RunState& state, const Value* value, size_t index) {
  auto it = state.live.find(value);
  if (it == state.live.end()) return;
  auto last = schedule_.lastUse.find(value);
  if (last != schedule_.lastUse.end() && last->second != index) return;
  Live& live = it->second;
  if (live.device && !live.streams.empty()) {
    // Streams may still be using the block: it returns to the allocator once they are past
    // this point (reapFrees).
    RunState::PendingFree pending{live.allocator, live.block, {}};
    for (size_t s : live.streams) {
      auto use = std::make_unique<CudaEvent>(streams_[s]->device());
      use->record(*streams_[s]);
      pending.uses.push_back(std::move(use));
    }
    state.pendingFrees.push_back(std::move(pending));
  } else {
    // Host data: the staging copies still reading it hold their own reference.
    live.allocator->free(live.block);
  }
  state.live.erase(it);
}

void CudaExecutor::reapFrees(RunState& state, bool wait) {
  auto& pending = state.pendingFrees;
  for (auto it = pending.begin(); it != pending.end();) {
    bool done = true;
    for (const auto& use : it->uses) {
      if (wait)
        use->synchronize();
      else if (!use->done())
        done = false;
    }
    if (!done) {
      ++it;
      continue;
    }
    it->allocator->free(it->block);
    it = pending.erase(it);
  }
}

void CudaExecutor::finish(RunState& state) {
  // Every stream's end, timed from its GPU's start event; then drain them all, keeping the
  // first failure (a kernel's error surfaces here unless GXC_LAUNCH_BLOCKING=1).
  std::vector<std::unique_ptr<CudaEvent>> ends(streams_.size());
  std::exception_ptr failure;
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!streams_[s]) continue;
    try {
      ends[s] = std::make_unique<CudaEvent>(streams_[s]->device(), /*timing=*/true);
      ends[s]->record(*streams_[s]);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!streams_[s]) continue;
    try {
      streams_[s]->synchronize();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) {
    for (auto& pending : state.pendingFrees) pending.allocator->free(pending.block);
    state.pendingFrees.clear();
    std::rethrow_exception(failure);
  }
  reapFrees(state, /*wait=*/true);
  std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - state.start;
  state.devices[0].ms = wall.count();
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!ends[s]) continue;
    size_t gpu = static_cast<size_t>(schedule_.streams[s].device.index);
    double ms = ends[s]->millisecondsSince(*gpus_[gpu]->runStart);
    state.devices[gpu + 1].ms = std::max(state.devices[gpu + 1].ms, ms);
  }
}

}  // namespace gxc
