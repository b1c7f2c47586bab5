// The cuda executor, op by op: memory, waits, the work itself, records, and frees.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <limits>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_run_state.h"
#include "runtime/host/cpu_gemm.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {

void attributeToLayer(const Op& op, const std::function<void()>& work) {
  try {
    work();
  } catch (const CudaCallError& error) {
    runtimeError(op.loc, "layer '{}' on {}: {}", op.layerName(), op.device().str(),
                 error.message());
  }
}

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
  // On a GPU: where plan-memory put it, in the arena or in the param or input it views.
  const Placement& placement = plan_.placementOf(op.result);
  std::byte* base = nullptr;
  switch (placement.storage) {
    case Storage::Arena:
      base = static_cast<std::byte*>(gpus_.at(op.device().index)->arena.address);
      break;
    case Storage::Param:
    case Storage::Input:
      base = static_cast<std::byte*>(liveOf(state, placement.base).device);
      break;
    case Storage::Nowhere:
      GXC_CHECK(false, "layer '{}', a fused kernel's inner member, has memory", op.layerName());
  }
  live.device = placement.bytes == 0 ? nullptr : base + placement.offset;
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
    // The caller's tensor itself, not a copy (a copy of a 16 MiB input costs milliseconds):
    // `inputs` outlives the run, nothing writes an input, and finish() waits for every staged
    // copy that reads it. Owning nothing, it is never moved out as an output.
    live.host = std::shared_ptr<Tensor>(std::shared_ptr<Tensor>(), const_cast<Tensor*>(&tensor));
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

void CudaExecutor::markUse(RunState& state, const Value* value, size_t stream) {
  if (auto view = viewBase_.find(value); view != viewBase_.end()) value = view->second;
  if (!params_.count(value)) state.live.at(value).streams.insert(stream);
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
  // On a GPU a fused kernel's root computes the whole kernel from the step's inputs; its
  // internal members have neither memory nor work. The host runs every op by itself.
  const KernelStep* step = stream ? steps_.stepOfRoot(&op) : nullptr;
  bool internal = stream && !step;
  std::vector<const Value*> reads =
      step ? step->inputs : std::vector<const Value*>(op.operands.begin(), op.operands.end());
  if (!internal) allocateResult(state, op);
  if (stream) {
    CudaDeviceGuard guard(stream->device());
    auto work = [&] {
      if (!internal) {
        execute(state, index, state.live.at(op.result));
        markUse(state, op.result, scheduled.stream);
        for (const Value* read : reads) markUse(state, read, scheduled.stream);
      }
      if (scheduled.record) events_.at(*scheduled.record)->record(*stream);
      if (config_.launchBlocking) stream->synchronize();
    };
    if (config_.launchBlocking)
      attributeToLayer(op, work);
    else
      work();
  } else {
    executeOnHost(state, op, state.live.at(op.result));
    if (scheduled.record) state.hostRecorded.insert(*scheduled.record);
  }
  for (const Value* read : reads) {
    freeIfDead(state, read, index);
    if (auto view = viewBase_.find(read); view != viewBase_.end())
      freeIfDead(state, view->second, index);
  }
  freeIfDead(state, op.result, index);
}

void CudaExecutor::executeOnHost(RunState& state, const Op& op, Live& result) {
  if (op.kind == OpKind::Assign) {  // a param held on the host takes its new value
    const Live& param = *params_.at(op.operands[0]);
    *param.host = *liveOf(state, op.operands[1]).host;
    result.host = param.host;
    return;
  }
  // The host GEMMs (cpu_gemm.h), the reference kernels for the rest: host ops of a GPU run are few
  // and small, and this builds no host kernels for them.
  std::vector<const Tensor*> operands;
  std::vector<ConstTensorView> views;
  for (const Value* operand : op.operands) {
    operands.push_back(liveOf(state, operand).host.get());
    views.push_back(operands.back()->view());
  }
  Tensor value(op.result->type.dtype, op.result->type.shape);
  if (op.kind == OpKind::Matmul)
    cpuMatmul(op, views, value.view());
  else if (op.kind == OpKind::Linear)
    cpuLinear(op, views, value.view());
  else
    value = evaluateReferenceOp(op, operands);
  // Indices a GPU op will read, scattered from here (a shard, a micro-batch): checked now, on
  // the host, before any copy takes them to the GPU.
  for (const IndexCheck& check : indexChecks_)
    if (check.when == IndexCheckPoint::AfterHostOp && check.source == op.result)
      checkDataIndices(*check.consumer, value.view());
  result.host = std::make_shared<Tensor>(std::move(value));
}

void CudaExecutor::execute(RunState& state, size_t index, Live& result) {
  const ScheduledOp& scheduled = schedule_.ops[index];
  const KernelStep& step = *steps_.stepOfRoot(scheduled.op);
  CudaStream& stream = *streams_[scheduled.stream];
  switch (step.kind) {
    case StepKind::Param:
      GXC_CHECK(false, "param '{}' is uploaded, not run", step.root()->layerName());
      return;
    case StepKind::Copy:
      return copy(state, index, result);
    case StepKind::Assign: {  // the param's new value, into its own memory (allocateResult)
      const void* value = liveOf(state, step.root()->operands[1]).device;
      if (value != result.device)
        checkCuda(cudaMemcpyAsync(result.device, value,
                                  static_cast<size_t>(step.root()->result->type.bytes()),
                                  cudaMemcpyDeviceToDevice, stream.get()),
                  fmt::format("layer '{}': assigning param '{}'", step.root()->layerName(),
                              step.root()->operands[0]->name));
      return;
    }
    case StepKind::View:
      return;  // allocateResult pointed it at the bytes it sees
    case StepKind::Gemm: {
      const CudaGemm& gemm = gemms_.at(step.root());
      const void* bias = gemm.biasValue ? liveOf(state, gemm.biasValue).device : nullptr;
      CudaGemmRunner::Done done =
          gpus_.at(step.root()->device().index)
              ->gemm->run(gemm, liveOf(state, gemm.aValue).device,
                          liveOf(state, gemm.bValue).device, bias, result.device, stream.get());
      if (done == CudaGemmRunner::Done::AllButFusedMembers)
        launchEpilogue(state, step, result, stream);
      return;
    }
    case StepKind::Conv: {
      // cuDNN where it takes the convolution and has an engine for it, else the generated
      // one; both write the step's result, which a fused epilogue then updates in place.
      const Op& op = *step.first();
      const CudnnConv& conv = convs_.at(&op);
      CudnnConvRunner* cudnn = gpus_.at(op.device().index)->conv.get();
      const void* bias = conv.geometry.bias ? liveOf(state, op.operands[2]).device : nullptr;
      if (!cudnn || !conv.geometry.viaCudnn() ||
          !cudnn->run(conv, liveOf(state, op.operands[0]).device,
                      liveOf(state, op.operands[1]).device, bias, result.device, stream.get()))
        launchGenerated(state, program_.kernels.at(&op), result, stream);
      if (step.ops.size() > 1) launchEpilogue(state, step, result, stream);
      return;
    }
    case StepKind::Generated:
      checkIndicesOnDevice(state, step, stream);
      launchGenerated(state, program_.kernels.at(step.root()), result, stream);
      return;
  }
}

void CudaExecutor::launchGenerated(RunState& state, const CudaKernelLaunch& launch, Live& result,
                                   CudaStream& stream) {
  std::vector<void*> pointers = {result.device};
  for (const Value* input : launch.inputs) pointers.push_back(liveOf(state, input).device);
  kernels_->launch(launch, pointers, stream);
}

void CudaExecutor::launchEpilogue(RunState& state, const KernelStep& step, Live& result,
                                  CudaStream& stream) {
  // The epilogue kernel on the GEMM's or convolution's result, in place: its input 0 is that
  // result (no memory of its own: it is a member of the step), each element read before
  // written.
  const CudaKernelLaunch& launch = program_.epilogues.at(step.root());
  GXC_CHECK(!launch.inputs.empty() && launch.inputs[0] == step.first()->result,
            "layer '{}': the epilogue kernel does not read the {} result first",
            step.root()->layerName(), opName(step.first()->kind));
  std::vector<void*> pointers = {result.device, result.device};
  for (size_t i = 1; i < launch.inputs.size(); ++i)
    pointers.push_back(liveOf(state, launch.inputs[i]).device);
  kernels_->launch(launch, pointers, stream);
}

void CudaExecutor::checkIndicesOnDevice(RunState& state, const KernelStep& step,
                                        CudaStream& stream) {
  for (const IndexCheck& check : indexChecks_) {
    if (check.when != IndexCheckPoint::ReadBack ||
        std::find(step.ops.begin(), step.ops.end(), check.consumer) == step.ops.end())
      continue;  // another step's, or checked on the host
    const Op* op = check.consumer;
    const Value* indices = check.source;
    // Computed on a GPU: wait for them (this stream already waits for their producer), then
    // read them back. They are integers, one per row: small next to the data they index.
    stream.synchronize();
    Tensor values(indices->type.dtype, indices->type.shape);
    checkCuda(cudaMemcpy(values.data(), liveOf(state, indices).device, values.nbytes(),
                         cudaMemcpyDeviceToHost),
              fmt::format("layer '{}': reading its indices back", op->layerName()));
    checkDataIndices(*op, values.view());
  }
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
    if (fromGpu == toGpu)  // a `to` left in the graph
      checkCuda(cudaMemcpyAsync(result.device, source.device, static_cast<size_t>(bytes),
                                cudaMemcpyDeviceToDevice, stream.get()),
                fmt::format("layer '{}': copy on {}", op.layerName(), to.str()));
    else if (peerToPeer(fromGpu, toGpu))
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
  if (!live.allocator) {  // bytes of an arena, a param or an input: nothing of its own
    state.live.erase(it);
    return;
  }
  if (live.device && !live.streams.empty()) {
    // Streams may still be using the block: it returns to the allocator once they are past
    // this point (reapFrees). The events come from the pool, and go back to it then.
    RunState::PendingFree pending{live.allocator, live.block, {}};
    for (size_t s : live.streams) {
      pending.uses.push_back(eventPool_.take(streams_[s]->device()));
      pending.uses.back()->record(*streams_[s]);
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
    for (auto& use : it->uses) eventPool_.giveBack(std::move(use));
    it = pending.erase(it);
  }
}

void CudaExecutor::finish(RunState& state) {
  // Every stream's end, timed from its GPU's start event; then drain them all, keeping the
  // first failure (a kernel's error surfaces here unless GXC_LAUNCH_BLOCKING=1).
  std::vector<bool> ended(streams_.size(), false);
  std::exception_ptr failure;
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!streams_[s]) continue;
    try {
      streamEnds_[s]->record(*streams_[s]);
      ended[s] = true;
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
    if (!staging_[s]) continue;
    // A stream that failed may return before its staging thread is done with the tensors.
    staging_[s]->waitIdle();
    try {
      staging_[s]->rethrowFailure();  // its thread's, now that it is idle
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) {
    for (auto& pending : state.pendingFrees) {
      pending.allocator->free(pending.block);
      for (auto& use : pending.uses) eventPool_.giveBack(std::move(use));
    }
    state.pendingFrees.clear();
    std::rethrow_exception(failure);
  }
  reapFrees(state, /*wait=*/true);
  std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - state.start;
  state.devices[0].ms = wall.count();
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (!ended[s]) continue;
    size_t gpu = static_cast<size_t>(schedule_.streams[s].device.index);
    double ms = streamEnds_[s]->millisecondsSince(*gpus_[gpu]->runStart);
    state.devices[gpu + 1].ms = std::max(state.devices[gpu + 1].ms, ms);
  }
}

}  // namespace gxc
