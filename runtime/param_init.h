// Materializing params and default inputs: loaded from a weights file, or generated
// deterministically from the model's seed and the tensor's name, the same on every
// platform and every run (so a placement can never change the numbers).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/graph.h"
#include "tensor/safetensors.h"
#include "tensor/tensor.h"

namespace gxc {

// Opens each weights file once, however many params it holds; a file `graph` holds in memory
// (Graph::findParamData) is read from there.
class WeightFiles {
 public:
  const SafetensorsFile& get(const std::string& path, const Graph* graph = nullptr);

 private:
  std::map<std::string, std::unique_ptr<SafetensorsFile>> files_;
};

// The value of a `param` op, as its attributes say (init = zeros, ones, constant, normal,
// uniform or file). A param shard (ir/param_shard.h) gets exactly the slice of the whole
// param's values, computed or read for that slice alone: the random streams are counters,
// so element i of the whole param is generated without the i before it.
Tensor materializeParam(const Op& param, WeightFiles& files);

// The params an executor holds, by their `name` (the state_dict name; a training step's
// optimizer state too): what training saves. Replicas of one param (data-parallel) hold the
// same values; one is taken. Shards of a split param are not whole params and are left out.
std::map<std::string, Tensor> paramValuesByName(const std::map<const Value*, Tensor>& params);
// Overwrites the params named in `values` (each of the param's dtype and shape, every replica):
// a resume, or the values another executor of the same model trained.
void overwriteParams(std::map<const Value*, Tensor>& params,
                     const std::map<std::string, Tensor>& values);

// A model input with no file: standard normal values from the seed and its name for float
// inputs; for integer inputs (class targets, embedding indices) uniform integers in
// [0, bound), bound being the smallest class or embedding count among its consumers.
Tensor defaultInput(const Graph& graph, const Value& input, int64_t seed);
// The same with the bound given: defaultInputBound of the graph as the model was loaded, before
// placement packs inputs into shared transfers whose bound would be the smallest of them all.
Tensor defaultInput(const Value& input, int64_t seed, int64_t bound);
// The bound of an integer input's default values (0: none, all zeros), from its consumers in
// `graph`, looking through copies, slices, `to`s, reshapes and concats.
int64_t defaultInputBound(const Graph& graph, const Value& input);

// A stream of pseudo-random numbers keyed by (seed, name): splitmix64 over a counter, so the
// same key gives the same numbers everywhere, independent of any library's distributions.
class KeyedRandom {
 public:
  KeyedRandom(int64_t seed, const std::string& name);
  uint64_t nextBits();
  double nextUniform();  // in [0, 1)
  double nextNormal();   // standard normal, Box-Muller
  // Positions the stream as if `draws` calls of nextBits had been made since construction
  // (nextUniform takes one draw, a pair of nextNormal values two).
  void seek(uint64_t draws);

 private:
  uint64_t start_;
  uint64_t state_;
  bool hasSpare_ = false;
  double spare_ = 0;
};

}  // namespace gxc
