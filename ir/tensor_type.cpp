#include "ir/tensor_type.h"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/diagnostic.h"

namespace gxc {

std::optional<int64_t> checkedNumel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::string shapeString(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string Device::str() const {
  switch (kind) {
    case Kind::Unplaced:
      return "?";
    case Kind::Cpu:
      return "cpu";
    case Kind::Cuda:
      return fmt::format("cuda:{}", index);
  }
  return "?";
}

std::optional<Device> parseDevice(std::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (!text.starts_with("cuda:")) return std::nullopt;
  std::string_view digits = text.substr(5);
  int index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0)
    return std::nullopt;
  return Device::cuda(index);
}

int64_t TensorType::numel() const {
  GXC_CHECK(known, "numel of a value whose type is not inferred");
  auto n = checkedNumel(shape);
  GXC_CHECK(n.has_value(), "numel of an overflowing shape {}", shapeString(shape));
  return *n;
}

int64_t TensorType::bytes() const { return numel() * static_cast<int64_t>(dtypeSize(dtype)); }

std::string TensorType::withoutDevice() const {
  if (!known) return "?";
  return fmt::format("{}{}", dtypeName(dtype), shapeString(shape));
}

std::string TensorType::str() const { return withoutDevice() + " @" + device.str(); }

}  // namespace gxc
