// Shape and dtype rules of every op: the single source of truth that the frontend (as it
// lowers each layer) and the infer-shapes pass both use.
#pragma once

#include "ir/graph.h"

namespace gxc {

// The dtype and shape `op` produces from its operands' types and its attributes; the device
// is the op's current one. Requires every operand's type to be known. A model error (with the
// op's location, naming the layer, showing the shapes involved) when the op cannot apply.
TensorType inferResultType(const Op& op);

// NumPy broadcasting of two shapes; nullopt when they are incompatible.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b);

// `axis` (possibly negative) as an index into a shape of rank `rank`; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

// The dims layer_norm and rms_norm normalize over: their `normalized_shape` (an integer or a
// list), else the last dim of `x` (none when x is 0-d). Not checked against x here.
Shape normalizedShapeOf(const Attrs& attrs, const Shape& x);

// rms_norm's eps when the model gives none: the dtype's machine epsilon, as torch.finfo(dtype).eps.
double rmsNormDefaultEps(DType dtype);

}  // namespace gxc
