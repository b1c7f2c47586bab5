#include "runtime/host/cpu_layer_norm.h"

#include <cstring>
#include <tuple>
#include <unordered_map>

#include <omp.h>

#include "ir/diagnostic.h"
#include "ir/infer_type.h"
#include "runtime/host/onednn_engine.h"
#include "target/host_library.h"

namespace gxc {
namespace {

using dnnl::memory;

struct RowSet {
  int64_t rows = 0, length = 0;
};

RowSet rowSetOf(const Op& op) {
  const Shape& shape = op.operands[0]->type.shape;
  RowSet s;
  s.length = checkedNumel(normalizedShapeOf(op.attrs, shape)).value();
  s.rows = s.length == 0 ? 0 : checkedNumel(shape).value() / s.length;
  return s;
}

struct PreparedLayerNorm {
  dnnl::layer_normalization_forward primitive;
  memory::desc data, params, scratchpad;
};

PreparedLayerNorm prepare(const RowSet& s, bool scale, bool shift, float eps) {
  memory::desc data({s.rows, s.length}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc params({s.length}, memory::data_type::f32, memory::format_tag::a);
  auto flags = dnnl::normalization_flags::none;
  if (scale) flags |= dnnl::normalization_flags::use_scale;
  if (shift) flags |= dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, data, eps, flags),
      userScratchpad(), oneDnnEngine());
  return {dnnl::layer_normalization_forward(pd), data, params, pd.scratchpad_desc()};
}

// Per shape, flags, eps (its bits) and thread count.
const PreparedLayerNorm& preparedFor(const RowSet& s, bool scale, bool shift, float eps) {
  static PreparedPrimitives<std::tuple<int64_t, int64_t, bool, bool, uint32_t, int>,
                            PreparedLayerNorm>
      prepared;
  uint32_t epsBits;
  std::memcpy(&epsBits, &eps, sizeof eps);
  return prepared.get({s.rows, s.length, scale, shift, epsBits, omp_get_max_threads()},
                      [&] { return prepare(s, scale, shift, eps); });
}

}  // namespace

void cpuLayerNorm(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  GXC_CHECK(isHostLibraryRowOp(op) && op.kind == OpKind::LayerNorm,
            "layer '{}': a layer_norm oneDNN does not run", op.layerName());
  GXC_CHECK(operands.size() == op.operands.size(), "layer '{}': layer_norm given {} operands",
            op.layerName(), operands.size());
  const bool scale = operands.size() > 1, shift = operands.size() > 2;
  const float eps = static_cast<float>(op.attrs.getFloat("eps", 1e-5));
  const PreparedLayerNorm& p = preparedFor(rowSetOf(op), scale, shift, eps);
  std::unordered_map<int, memory>& args = threadArgs(&p, [&](auto& made) {
    const dnnl::engine& engine = oneDnnEngine();
    made.emplace(DNNL_ARG_SRC, memory(p.data, engine, nullptr));
    made.emplace(DNNL_ARG_DST, memory(p.data, engine, nullptr));
    made.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, engine, nullptr));
    if (scale) made.emplace(DNNL_ARG_SCALE, memory(p.params, engine, nullptr));
    if (shift) made.emplace(DNNL_ARG_SHIFT, memory(p.params, engine, nullptr));
  });
  // oneDNN takes its inputs as mutable handles; it only reads them.
  args.at(DNNL_ARG_SRC).set_data_handle(const_cast<float*>(operands[0].as<float>()));
  args.at(DNNL_ARG_DST).set_data_handle(result.as<float>());
  args.at(DNNL_ARG_SCRATCHPAD).set_data_handle(threadScratchpad(p.scratchpad.get_size()));
  if (scale) args.at(DNNL_ARG_SCALE).set_data_handle(const_cast<float*>(operands[1].as<float>()));
  if (shift) args.at(DNNL_ARG_SHIFT).set_data_handle(const_cast<float*>(operands[2].as<float>()));
  dnnl::stream& stream = threadStream();
  p.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace gxc
