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

namespace {

void appendInteger(std::string& out, int64_t value) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void appendShape(std::string& out, const Shape& shape) {
  out += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    appendInteger(out, shape[i]);
  }
  out += ']';
}

}  // namespace

std::string shapeString(const Shape& shape) {
  std::string out;
  appendShape(out, shape);
  return out;
}

std::string Device::str() const {
  std::string out;
  appendTo(out);
  return out;
}

void Device::appendTo(std::string& out) const {
  switch (kind) {
    case Kind::Cpu:
      out += "cpu";
      return;
    case Kind::Cuda:
      out += "cuda:";
      appendInteger(out, index);
      return;
    case Kind::Unplaced:
      break;
  }
  out += '?';
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
  std::string out;
  appendTo(out, false);
  return out;
}

std::string TensorType::str() const {
  std::string out;
  appendTo(out, true);
  return out;
}

void TensorType::appendTo(std::string& out, bool withDevice) const {
  if (known) {
    out += dtypeName(dtype);
    appendShape(out, shape);
  } else {
    out += '?';
  }
  if (!withDevice) return;
  out += " @";
  device.appendTo(out);
}

}  // namespace gxc
