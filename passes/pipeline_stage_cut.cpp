#include "passes/pipeline_stage_cut.h"

#include <algorithm>
#include <set>

namespace gxc {
namespace {

// The layers of the stage being filled: their time, params and largest working set.
struct StageLoad {
  double seconds = 0;
  std::set<const Value*> params;
  int64_t paramBytes = 0;
  int64_t workingBytes = 0;
  bool empty = true;

  int64_t bytesWith(const StageLayer& layer) const {
    int64_t added = 0;
    for (const Value* param : layer.params)
      if (!params.count(param)) added += param->type.bytes();
    return paramBytes + added + std::max(workingBytes, layer.workingBytes);
  }

  void add(const StageLayer& layer) {
    seconds += layer.seconds;
    for (const Value* param : layer.params)
      if (params.insert(param).second) paramBytes += param->type.bytes();
    workingBytes = std::max(workingBytes, layer.workingBytes);
    empty = false;
  }
};

class Sweep {
 public:
  Sweep(const std::vector<StageLayer>& layers, const std::vector<int64_t>& capacity,
        bool withMemory)
      : layers_(layers), capacity_(capacity), withMemory_(withMemory) {}

  // The greedy cut within `limit` seconds per stage, or empty when there is none.
  std::optional<std::vector<size_t>> cut(double limit) const {
    std::vector<size_t> stageOf;
    size_t stage = 0;
    StageLoad load;
    for (const StageLayer& layer : layers_) {
      if (layer.requiredStage >= 0) {
        auto required = static_cast<size_t>(layer.requiredStage);
        if (required < stage) return std::nullopt;
        if (required > stage) {
          stage = required;
          load = {};
        }
      }
      if (!load.empty && !fits(load, layer, stage, limit)) {
        if (layer.requiredStage >= 0 || ++stage >= capacity_.size()) return std::nullopt;
        load = {};
      }
      if (!fits(load, layer, stage, limit)) return std::nullopt;  // too big even alone
      load.add(layer);
      stageOf.push_back(stage);
    }
    return stageOf;
  }

 private:
  bool fits(const StageLoad& load, const StageLayer& layer, size_t stage, double limit) const {
    if (load.seconds + layer.seconds > limit) return false;
    int64_t capacity = capacity_[stage];
    return !withMemory_ || capacity <= 0 || load.bytesWith(layer) <= capacity;
  }

  const std::vector<StageLayer>& layers_;
  const std::vector<int64_t>& capacity_;
  bool withMemory_;
};

double slowestStage(const std::vector<StageLayer>& layers, const std::vector<size_t>& stageOf) {
  std::vector<double> seconds(stageOf.empty() ? 0 : stageOf.back() + 1, 0.0);
  for (size_t i = 0; i < layers.size(); ++i) seconds[stageOf[i]] += layers[i].seconds;
  return seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
}

}  // namespace

std::optional<StageCut> cutStages(const std::vector<StageLayer>& layers,
                                  const std::vector<int64_t>& capacityBytes) {
  double slowest = 0, total = 0;
  for (const StageLayer& layer : layers) {
    slowest = std::max(slowest, layer.seconds);
    total += layer.seconds;
  }
  // Everything in as few stages as the annotations allow always meets `total`: only memory
  // or the annotations can rule it out.
  double ceiling = total * (1 + 1e-9) + 1e-15;
  StageCut result;
  std::optional<Sweep> sweep;
  for (bool withMemory : {true, false}) {
    sweep.emplace(layers, capacityBytes, withMemory);
    if (sweep->cut(ceiling)) {
      result.fitsMemory = withMemory;
      break;
    }
    sweep.reset();
  }
  if (!sweep) return std::nullopt;
  double low = slowest, high = ceiling;
  for (int step = 0; step < 64 && low < high; ++step) {
    double middle = low + (high - low) / 2;
    if (middle <= low || middle >= high) break;
    (sweep->cut(middle) ? high : low) = middle;
  }
  if (sweep->cut(low)) high = low;
  result.stageOf = *sweep->cut(high);
  result.bottleneckSeconds = slowestStage(layers, result.stageOf);
  return result;
}

}  // namespace gxc
