#include "runtime/param_init.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

#include "ir/infer_type.h"
#include "ir/param_shard.h"
#include "ir/progress.h"

namespace gxc {

KeyedRandom::KeyedRandom(int64_t seed, const std::string& name) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a of the name
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  state_ = start_ = hash ^ (static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull);
}

void KeyedRandom::seek(uint64_t draws) {
  state_ = start_ + draws * 0x9e3779b97f4a7c15ull;  // splitmix64 adds this once per draw
  hasSpare_ = false;
}

uint64_t KeyedRandom::nextBits() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double KeyedRandom::nextUniform() { return static_cast<double>(nextBits() >> 11) * 0x1.0p-53; }

double KeyedRandom::nextNormal() {
  if (hasSpare_) {
    hasSpare_ = false;
    return spare_;
  }
  double u1 = 1.0 - nextUniform();  // in (0, 1]: log stays finite
  double u2 = nextUniform();
  double radius = std::sqrt(-2.0 * std::log(u1));
  spare_ = radius * std::sin(2 * std::numbers::pi * u2);
  hasSpare_ = true;
  return radius * std::cos(2 * std::numbers::pi * u2);
}

const SafetensorsFile& WeightFiles::get(const std::string& path, const Graph* graph) {
  auto& file = files_[path];
  if (file) return *file;
  const auto* inMemory =
      graph ? dynamic_cast<const SafetensorsFile*>(graph->findParamData(path)) : nullptr;
  if (inMemory)
    file = std::make_unique<SafetensorsFile>(*inMemory);
  else
    file = std::make_unique<SafetensorsFile>(SafetensorsFile::open(path));
  return *file;
}

namespace {

// Progress is reported once per this many elements: rarely enough to cost nothing.
constexpr int64_t kProgressElements = int64_t{1} << 20;

// Elements [dst, dst + count) of `tensor` get the values that elements [first, first + count)
// of the whole param have under its init: the same stream, entered at element `first`.
void fillFromInit(Tensor& tensor, int64_t dst, int64_t first, int64_t count, const Attrs& attrs,
                  const std::string& name, ProgressTask& progress) {
  std::string init = attrs.getString("init", "");
  GXC_CHECK(init == "zeros" || init == "ones" || init == "constant" || init == "normal" ||
                init == "uniform",
            "param '{}' has unknown init '{}'", name, init);
  KeyedRandom random(attrs.getInt("seed", 0), name);
  if (init == "uniform") random.seek(static_cast<uint64_t>(first));
  if (init == "normal") {
    // Values come in pairs of two draws: an odd element is the second of its pair.
    random.seek(static_cast<uint64_t>(first / 2) * 2);
    if (first % 2 == 1) random.nextNormal();
  }
  // Read once, not per element: a param may have billions.
  const bool normal = init == "normal", uniform = init == "uniform";
  const double constant = init == "ones"       ? 1.0
                          : init == "constant" ? attrs.getFloat("value", 0)
                                               : 0.0;
  const double mean = attrs.getFloat("mean", 0), stddev = attrs.getFloat("std", 1);
  const double low = attrs.getFloat("low", 0), high = attrs.getFloat("high", 1);
  const bool integer = isInteger(tensor.dtype());
  const auto elementBytes = static_cast<int64_t>(dtypeSize(tensor.dtype()));
  for (int64_t chunk = dst; chunk < dst + count; chunk += kProgressElements) {
    const int64_t chunkEnd = std::min(dst + count, chunk + kProgressElements);
    for (int64_t i = chunk; i < chunkEnd; ++i) {
      double value = normal    ? mean + stddev * random.nextNormal()
                     : uniform ? low + (high - low) * random.nextUniform()
                               : constant;
      if (integer)
        tensor.storeInt(i, static_cast<int64_t>(std::llround(value)));
      else  // f64 keeps the double draw; narrower floats round it; bool is value != 0
        tensor.storeDouble(i, value);
    }
    progress.advance((chunkEnd - chunk) * elementBytes);
  }
}

}  // namespace

namespace {

std::string paramName(const Value* value) {
  return value->producer->attrs.getString("name", value->name);
}

bool isShard(const Value* value) { return value->producer->attrs.has("full_shape"); }

}  // namespace

std::map<std::string, Tensor> paramValuesByName(const std::map<const Value*, Tensor>& params) {
  std::map<std::string, Tensor> values;
  for (const auto& [value, tensor] : params) {
    if (isShard(value)) continue;
    auto [it, fresh] = values.emplace(paramName(value), tensor);
    // Replicas of one param (each device's, which data-parallel training updates on every
    // device) hold the same bits, or the training has gone wrong.
    GXC_CHECK(
        fresh || (it->second.nbytes() == tensor.nbytes() &&
                  std::equal(tensor.data(), tensor.data() + tensor.nbytes(), it->second.data())),
        "the replicas of param '{}' differ", it->first);
  }
  return values;
}

void overwriteParams(std::map<const Value*, Tensor>& params,
                     const std::map<std::string, Tensor>& values) {
  for (auto& [value, tensor] : params) {
    auto given = values.find(paramName(value));
    if (given == values.end() || isShard(value)) continue;
    GXC_CHECK(given->second.dtype() == tensor.dtype() && given->second.shape() == tensor.shape(),
              "param '{}' is {}{}, given {}{}", given->first, dtypeName(tensor.dtype()),
              shapeString(tensor.shape()), dtypeName(given->second.dtype()),
              shapeString(given->second.shape()));
    std::copy(given->second.data(), given->second.data() + tensor.nbytes(), tensor.data());
  }
}

Tensor materializeParam(const Op& param, WeightFiles& files) {
  GXC_CHECK(param.kind == OpKind::Param, "materializing a {} as a param", opName(param.kind));
  const TensorType& type = param.result->type;
  const Attrs& attrs = param.attrs;
  std::string name = attrs.getString("name", "");
  std::optional<ParamShard> shard = paramShard(param);
  Shape fullShape = shard ? shard->fullShape : type.shape;
  if (attrs.getString("init", "") == "file") {
    const SafetensorsFile& file = files.get(attrs.getString("file", ""), param.graph());
    // The whole param's dtype and shape are checked first, shard or not, so a shard reports
    // the same mismatch the whole param would.
    auto entry = file.entries().find(name);
    if (entry != file.entries().end() &&
        (entry->second.dtype != type.dtype || entry->second.shape != fullShape))
      modelError(param.loc, "param '{}': the weights file now has {}{}, the model expects {}", name,
                 dtypeName(entry->second.dtype), shapeString(entry->second.shape),
                 TensorType::of(type.dtype, fullShape).withoutDevice());
    return shard ? file.readSlice(name, shard->axis, shard->start, shard->end) : file.read(name);
  }
  Tensor tensor(type.dtype, type.shape);
  ProgressTask progress(fmt::format("initializing param '{}'", param.layerName()),
                        static_cast<int64_t>(tensor.nbytes()), ProgressUnit::Bytes);
  if (!shard) {
    fillFromInit(tensor, 0, 0, tensor.numel(), attrs, name, progress);
    return tensor;
  }
  // One contiguous run of the whole param per index of the axes before the shard's axis.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < shard->axis; ++i) outer *= fullShape[i];
  for (auto i = static_cast<size_t>(shard->axis) + 1; i < fullShape.size(); ++i)
    inner *= fullShape[i];
  const int64_t run = (shard->end - shard->start) * inner;
  for (int64_t o = 0; o < outer; ++o)
    fillFromInit(tensor, o * run, (o * fullShape[shard->axis] + shard->start) * inner, run, attrs,
                 name, progress);
  return tensor;
}

Tensor defaultInput(const Graph& graph, const Value& input, int64_t seed) {
  return defaultInput(input, seed,
                      isInteger(input.type.dtype) ? defaultInputBound(graph, input) : 0);
}

Tensor defaultInput(const Value& input, int64_t seed, int64_t bound) {
  Tensor tensor(input.type.dtype, input.type.shape);
  KeyedRandom random(seed, input.name);
  if (isFloat(input.type.dtype)) {
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.storeFloat(i, static_cast<float>(random.nextNormal()));
    return tensor;
  }
  if (input.type.dtype == DType::Bool) {  // a random mask
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.storeInt(i, static_cast<int64_t>(random.nextBits() & 1));
    return tensor;
  }
  for (int64_t i = 0; i < tensor.numel(); ++i)
    tensor.storeInt(i, bound > 0 ? static_cast<int64_t>(random.nextBits() % bound) : 0);
  return tensor;
}

int64_t defaultInputBound(const Graph& graph, const Value& input) {
  // The readers that bound the values, looking through the copies, slices and `to`s that
  // placement puts between an input and the layers that read it, and the reshapes and concats
  // of batch-transfers (a concat packs other inputs too: the bound is then one for all, which
  // is why a run takes the bounds of the graph as loaded).
  int64_t bound = 0;
  std::vector<const Value*> pending = {&input};
  while (!pending.empty()) {
    const Value* value = pending.back();
    pending.pop_back();
    for (const Op* user : graph.users(value)) {
      if (user->kind == OpKind::Copy || user->kind == OpKind::Slice || user->kind == OpKind::To ||
          user->kind == OpKind::Reshape || user->kind == OpKind::Concat)
        pending.push_back(user->result);
      int64_t limit = 0;
      if (user->kind == OpKind::Embedding) limit = user->attrs.getInt("num_embeddings", 0);
      if ((user->kind == OpKind::CrossEntropy || user->kind == OpKind::NllLoss) &&
          user->operands[1] == value)
        limit = user->operands[0]->type.shape.at(1);
      if ((user->kind == OpKind::Gather || user->kind == OpKind::IndexSelect) &&
          user->operands[1] == value) {
        const TensorType& x = user->operands[0]->type;
        limit = x.shape.at(
            static_cast<size_t>(*normalizeAxis(user->attrs.getInt("axis", 0), x.rank())));
      }
      if (user->kind == OpKind::OneHot) limit = user->attrs.getInt("num_classes", 0);
      if (limit > 0) bound = bound == 0 ? limit : std::min(bound, limit);
    }
  }
  return bound;
}

}  // namespace gxc
