// Param shards: a `param` op that stands for one slice of a model param.
//
// split-layers cuts a weight too large for one device into shards, one per device. The whole
// weight must never exist anywhere (it fits no device, and may not fit the host), so each
// shard is its own `param` op that names the model param (`name`, its init or file, as the
// whole param's op did) and the slice it holds, in four attributes:
//   full_shape = [100000, 20000]  the model param's shape;
//   shard_axis = 0                the axis it is cut along;
//   shard_start = 0, shard_end = 25000   the range [start, end) along that axis.
// The op's own type is the slice's: full_shape with shard_axis set to end - start. The
// runtime materializes just that slice, with the values the same positions of the whole
// param would have (runtime/param_init.h), from the init or from the weights file.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace gxc {

struct ParamShard {
  Shape fullShape;
  int64_t axis = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// The slice a param op holds; nullopt for a whole param. Assumes a verified op.
std::optional<ParamShard> paramShard(const Op& param);
void setParamShard(Attrs& attrs, const ParamShard& shard);

// What is wrong with a param's shard attributes against its type, or nullopt: all four or
// none, an axis of the shape, 0 <= start < end <= full_shape[axis], and a result type that
// is exactly that slice of full_shape. Part of the verifier's schema check.
std::optional<std::string> paramShardProblem(const Op& param);

}  // namespace gxc
