#include "runtime/host/channels_last.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ir/fused_kernel.h"
#include "runtime/host/cpu_conv.h"
#include "runtime/host/cpu_pool.h"

namespace gxc {
namespace {

// A Conv step whose convolution oneDNN computes: an f32 conv2d.
bool convolvedByOneDnn(const KernelStep& step) {
  return step.kind == StepKind::Conv && step.first()->kind == OpKind::Conv2d &&
         step.first()->result->type.dtype == DType::F32;
}

std::vector<const Op*> epilogueOf(const KernelStep& step) {
  return {step.ops.begin() + 1, step.ops.end()};
}

// One whose epilogue the host computes too: a residual add's post-op may find no fast
// implementation, and a clamp before another member is no post-op (cpu_conv.cpp), leaving the
// epilogue to its generated kernel.
bool computedByOneDnn(const KernelStep& step) {
  return convolvedByOneDnn(step) &&
         (step.ops.size() == 1 || cpuConvolutionTakesEpilogue(*step.first(), epilogueOf(step)));
}

// Whether `reader` reads `value` as its convolution's image, or as its one residual, only.
bool readsChannelsLast(const KernelStep& reader, const Value* value) {
  if (!convolvedByOneDnn(reader) || reader.first()->operands[1] == value) return false;
  const bool image = reader.first()->operands[0] == value;
  const bool residual = epilogueResidual(reader) == value;
  if (image == residual) return false;  // neither, or both
  // No epilogue member reads it but the add of the residual.
  const Value* fed = reader.first()->result;
  for (const Op* member : epilogueOf(reader)) {
    bool reads = std::find(member->operands.begin(), member->operands.end(), value) !=
                 member->operands.end();
    if (reads && !(residual && member->kind == OpKind::Add && residualOf(*member, fed) == value))
      return false;
    fed = member->result;
  }
  return image || computedByOneDnn(reader);
}

// A max pool the host runs in oneDNN, alone in its step: it reads its x in either layout, and
// writes its result channels-last when x is.
bool pooledByOneDnn(const KernelStep& step) {
  return step.kind == StepKind::Generated && step.ops.size() == 1 &&
         cpuMaxPoolApplies(*step.root());
}

}  // namespace

const Value* epilogueResidual(const KernelStep& step) {
  const Value* residual = nullptr;
  const Value* fed = step.first()->result;
  for (const Op* member : epilogueOf(step)) {
    if (member->kind == OpKind::Add) {
      if (residual) return nullptr;  // two
      residual = residualOf(*member, fed);
    }
    fed = member->result;
  }
  return residual;
}

std::unordered_set<const Value*> channelsLastValues(const Graph& graph, const KernelSteps& steps) {
  std::unordered_map<const Value*, std::vector<const KernelStep*>> readers;
  for (const KernelStep& step : steps.steps())
    for (const Value* input : step.inputs) readers[input].push_back(&step);
  std::unordered_set<const Value*> outputs;
  for (const GraphOutput& output : graph.outputs()) outputs.insert(output.value);

  // In program order, so that a pool's x is decided before the pool.
  std::unordered_set<const Value*> kept;
  for (const KernelStep& step : steps.steps()) {
    const Value* value = step.root()->result;
    auto read = readers.find(value);
    const bool writesChannelsLast = (step.kind == StepKind::Conv && computedByOneDnn(step)) ||
                                    (pooledByOneDnn(step) && kept.count(step.root()->operands[0]));
    if (!writesChannelsLast || outputs.count(value) || read == readers.end()) continue;
    if (std::all_of(read->second.begin(), read->second.end(), [&](const KernelStep* reader) {
          return readsChannelsLast(*reader, value) || pooledByOneDnn(*reader);
        }))
      kept.insert(value);
  }
  return kept;
}

}  // namespace gxc
