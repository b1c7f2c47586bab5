// Where a broadcast operand's element is, from the coordinates of the shape it broadcasts
// into: its flat index (broadcastIndex), and whether a run of the inner dims reads one element
// of it or exactly its own elements in order (InnerRuns, cuda_source_elementwise.cpp).
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {

namespace {

// `shape` with 1s before it to outShape's rank, as broadcasting aligns it.
Shape alignedTo(const Shape& shape, const Shape& outShape) {
  GXC_CHECK(shape.size() <= outShape.size(), "{} does not broadcast to {}", shapeString(shape),
            shapeString(outShape));
  Shape aligned(outShape.size() - shape.size(), 1);
  aligned.insert(aligned.end(), shape.begin(), shape.end());
  return aligned;
}

}  // namespace

bool spansInnerDims(const Shape& shape, const Shape& outShape, size_t outerDims) {
  Shape aligned = alignedTo(shape, outShape);
  for (size_t d = 0; d < aligned.size(); ++d)
    if (aligned[d] != (d < outerDims ? 1 : outShape[d])) return false;
  return true;
}

bool fixedOverInnerDims(const Shape& shape, const Shape& outShape, size_t outerDims) {
  Shape aligned = alignedTo(shape, outShape);
  for (size_t d = outerDims; d < aligned.size(); ++d)
    if (aligned[d] != 1) return false;
  return true;
}

std::string broadcastIndex(const Shape& shape, const Shape& outShape, const std::string& prefix,
                           IndexType type) {
  GXC_CHECK(shape.size() <= outShape.size(), "{} does not broadcast to {}", shapeString(shape),
            shapeString(outShape));
  size_t skipped = outShape.size() - shape.size();
  std::vector<int64_t> strides = rowMajorStrides(shape);
  std::vector<std::string> terms;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    GXC_CHECK(shape[d] == outShape[skipped + d], "{} does not broadcast to {}", shapeString(shape),
              shapeString(outShape));
    std::string coord = fmt::format("{}{}", prefix, skipped + d);
    terms.push_back(
        strides[d] == 1 ? coord : fmt::format("{} * {}", coord, indexLiteral(strides[d], type)));
  }
  if (terms.empty()) return "0";
  std::string out = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) out += " + " + terms[i];
  return out;
}

}  // namespace gxc::cuda
