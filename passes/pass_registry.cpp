#include "passes/pass_registry.h"

#include <algorithm>

#include "passes/assign_devices.h"
#include "passes/assign_streams.h"
#include "passes/autocast.h"
#include "passes/autodiff.h"
#include "passes/batch_transfers.h"
#include "passes/data_parallel.h"
#include "passes/fuse.h"
#include "passes/infer_shapes.h"
#include "passes/insert_copies.h"
#include "passes/optimizer.h"
#include "passes/pipeline_stages.h"
#include "passes/plan_memory.h"
#include "passes/replicate_update.h"
#include "passes/split_layers.h"
#include "passes/train_mode.h"

namespace gxc {
namespace {

struct Registration {
  std::string_view name;
  std::unique_ptr<Pass> (*create)();
};

template <typename P>
std::unique_ptr<Pass> make() {
  return std::make_unique<P>();
}

// Sorted by name; a test checks that it stays sorted and that each pass reports its name.
// clang-format off
constexpr Registration kPasses[] = {
    {"assign-devices", &make<AssignDevicesPass>},
    {"assign-streams", &make<AssignStreamsPass>},
    {"autocast", &make<AutocastPass>},
    {"autodiff", &make<AutodiffPass>},
    {"batch-transfers", &make<BatchTransfersPass>},
    {"data-parallel", &make<DataParallelPass>},
    {"fuse", &make<FusePass>},
    {"infer-shapes", &make<InferShapesPass>},
    {"insert-copies", &make<InsertCopiesPass>},
    {"optimizer", &make<OptimizerPass>},
    {"pipeline-stages", &make<PipelineStagesPass>},
    {"plan-memory", &make<PlanMemoryPass>},
    {"replicate-update", &make<ReplicateUpdatePass>},
    {"split-layers", &make<SplitLayersPass>},
    {"train-mode", &make<TrainModePass>},
};
// clang-format on

}  // namespace

std::unique_ptr<Pass> createPass(std::string_view name) {
  for (const Registration& registration : kPasses)
    if (registration.name == name) return registration.create();
  return nullptr;
}

std::vector<std::string_view> registeredPassNames() {
  std::vector<std::string_view> names;
  for (const Registration& registration : kPasses) names.push_back(registration.name);
  return names;
}

}  // namespace gxc
