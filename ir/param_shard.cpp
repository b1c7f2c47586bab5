#include "ir/param_shard.h"

#include <array>

namespace gxc {
namespace {

constexpr std::array<const char*, 4> kShardAttrs = {"full_shape", "shard_axis", "shard_start",
                                                    "shard_end"};

}  // namespace

std::optional<ParamShard> paramShard(const Op& param) {
  if (param.kind != OpKind::Param || !param.attrs.has("full_shape")) return std::nullopt;
  ParamShard shard;
  shard.fullShape = *param.attrs.getIntList("full_shape");
  shard.axis = param.attrs.getInt("shard_axis", 0);
  shard.start = param.attrs.getInt("shard_start", 0);
  shard.end = param.attrs.getInt("shard_end", 0);
  return shard;
}

void setParamShard(Attrs& attrs, const ParamShard& shard) {
  attrs.set("full_shape", shard.fullShape);
  attrs.set("shard_axis", shard.axis);
  attrs.set("shard_start", shard.start);
  attrs.set("shard_end", shard.end);
}

std::optional<std::string> paramShardProblem(const Op& param) {
  int present = 0;
  for (const char* name : kShardAttrs) present += param.attrs.has(name) ? 1 : 0;
  if (present == 0) return std::nullopt;
  if (present != static_cast<int>(kShardAttrs.size()))
    return "a param shard needs all of full_shape, shard_axis, shard_start and shard_end";
  ParamShard shard = *paramShard(param);
  const int64_t rank = static_cast<int64_t>(shard.fullShape.size());
  if (shard.axis < 0 || shard.axis >= rank)
    return fmt::format("shard_axis {} is not an axis of full_shape {}", shard.axis,
                       shapeString(shard.fullShape));
  if (!checkedNumel(shard.fullShape) || shard.fullShape[shard.axis] < 0)
    return fmt::format("full_shape {} is not a valid shape", shapeString(shard.fullShape));
  if (shard.start < 0 || shard.start >= shard.end || shard.end > shard.fullShape[shard.axis])
    return fmt::format("shard [{}, {}) is not a non-empty range of the {} along axis {}",
                       shard.start, shard.end, shard.fullShape[shard.axis], shard.axis);
  const TensorType& type = param.result->type;
  if (!type.known) return std::nullopt;
  Shape expected = shard.fullShape;
  expected[shard.axis] = shard.end - shard.start;
  if (type.shape != expected)
    return fmt::format("a shard [{}, {}) along axis {} of {} is {}, not {}", shard.start, shard.end,
                       shard.axis, shapeString(shard.fullShape), shapeString(expected),
                       shapeString(type.shape));
  return std::nullopt;
}

}  // namespace gxc
