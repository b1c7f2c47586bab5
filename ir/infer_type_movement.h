// Shape rules of the data movement ops of format 1.1 (slice with a step, squeeze, unsqueeze,
// flatten, expand, triu, tril: infer_type_movement.cpp; gather, index_select, one_hot, pad,
// repeat, cumsum: infer_type_indexing.cpp), and the Python slicing and torch.split /
// torch.chunk rules the frontend applies when it lowers a layer into slices.
// ir/infer_type.cpp dispatches to these.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// The result shape of a movement op above; a located model error when it cannot apply.
Shape movementResultShape(const Op& op);
// assign(param, value): the param's shape; value must be of the param's dtype and shape.
Shape assignedShape(const Op& op);
// The result type of gather, index_select, one_hot, pad, repeat and cumsum (their dtype is not
// always their operand's); ir/infer_type_indexing.cpp.
TensorType indexingResultType(const Op& op);

// A slice of one axis, resolved: 0 <= start <= end <= dim, step >= 1.
struct SliceBounds {
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
  int64_t size() const { return end <= start ? 0 : (end - start + step - 1) / step; }
};

// Python's `x[start:end:step]` on a dim of size `dim` (step positive): negative bounds count
// from the end, and bounds beyond either end are clamped to it.
SliceBounds pythonSlice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                        int64_t step);

// The sizes of the pieces torch.split(x, size) and torch.chunk(x, chunks) cut a dim of size
// `dim` into (both positive): pieces of `size` (the last one smaller), and pieces of
// ceil(dim / chunks) (so there may be fewer than `chunks`).
std::vector<int64_t> splitSizes(int64_t dim, int64_t size);
std::vector<int64_t> chunkSizes(int64_t dim, int64_t chunks);

}  // namespace gxc
