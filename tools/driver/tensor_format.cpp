#include "tools/driver/tensor_format.h"

#include <fmt/format.h>

namespace gxc {
namespace {

constexpr int64_t kSummarizeAbove = 1000;  // NumPy's threshold
constexpr int64_t kEdgeItems = 3;

class Formatter {
 public:
  explicit Formatter(const Tensor& tensor)
      : tensor_(tensor), summarize_(tensor.numel() > kSummarizeAbove) {}

  std::string format() {
    if (tensor_.rank() == 0) return element(0);
    std::string out;
    formatDim(0, 0, out);
    return out;
  }

 private:
  std::string element(int64_t index) const {
    if (isInteger(tensor_.dtype())) return std::to_string(tensor_.loadInt(index));
    if (tensor_.dtype() == DType::Bool) return tensor_.loadInt(index) ? "true" : "false";
    if (tensor_.dtype() == DType::F64) return fmt::format("{:.6g}", tensor_.loadDouble(index));
    return fmt::format("{:.6g}", tensor_.loadFloat(index));
  }

  void formatDim(int64_t dim, int64_t offset, std::string& out) {
    const Shape& shape = tensor_.shape();
    int64_t stride = 1;
    for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) stride *= shape[d];
    int64_t size = shape[static_cast<size_t>(dim)];
    bool last = dim + 1 == tensor_.rank();
    std::string separator = last ? ", " : ",\n" + std::string(static_cast<size_t>(dim) + 1, ' ');
    out += "[";
    for (int64_t i = 0; i < size; ++i) {
      if (summarize_ && size > 2 * kEdgeItems && i == kEdgeItems) {
        out += "..." + separator;
        i = size - kEdgeItems;
      }
      if (last)
        out += element(offset + i);
      else
        formatDim(dim + 1, offset + i * stride, out);
      if (i + 1 < size) out += separator;
    }
    out += "]";
  }

  const Tensor& tensor_;
  bool summarize_;
};

}  // namespace

std::string formatTensor(const Tensor& tensor) { return Formatter(tensor).format(); }

}  // namespace gxc
