// The example models the platform tests run on every platform: those of models/ whose params
// fit here (very_big_module's 16 GB do not; its plan is checked without running it in
// tests/lit/cli/plan-memory-vbm.test), and whether a model's annotations fit a run's GPUs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "frontend/model_loader.h"

namespace gxc::testing_models {

inline std::vector<std::string> runnableModels() {
  std::vector<std::string> models;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GXC_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".yaml") continue;
    auto graph = loadModel(entry.path().string());
    int64_t paramBytes = 0;
    for (const Op* op : graph->ops())
      if (op->kind == OpKind::Param) paramBytes += op->result->type.bytes();
    if (paramBytes < (int64_t{256} << 20)) models.push_back(entry.path().filename().string());
  }
  std::sort(models.begin(), models.end());
  return models;
}

// Whether every `cuda:N` the graph names is one of `gpus` GPUs.
inline bool annotationsFit(const Graph& graph, int gpus) {
  for (const Op* op : graph.ops())
    if (op->device().isCuda() && op->device().index >= gpus) return false;
  return true;
}

}  // namespace gxc::testing_models
