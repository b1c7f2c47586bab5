#include "tensor/tensor.h"

#include <cmath>
#include <cstring>

#include "ir/diagnostic.h"

namespace gxc {

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  auto n = checkedNumel(shape_);
  GXC_CHECK(n.has_value(), "tensor of overflowing shape {}", shapeString(shape_));
  numel_ = *n;
  bytes_.assign(static_cast<size_t>(numel_) * dtypeSize(dtype_), std::byte{0});
}

Tensor::Tensor(ConstTensorView view) : Tensor(view.dtype(), view.shape()) {
  if (view.nbytes() > 0) std::memcpy(bytes_.data(), view.data(), view.nbytes());
}

float loadFloatAt(DType dtype, const std::byte* data, int64_t i) {
  switch (dtype) {
    case DType::F32:
      return reinterpret_cast<const float*>(data)[i];
    case DType::F16:
      return halfToFloat(reinterpret_cast<const uint16_t*>(data)[i]);
    case DType::BF16:
      return bfloat16ToFloat(reinterpret_cast<const uint16_t*>(data)[i]);
    case DType::I32:
      return static_cast<float>(reinterpret_cast<const int32_t*>(data)[i]);
    case DType::I64:
      return static_cast<float>(reinterpret_cast<const int64_t*>(data)[i]);
    case DType::F64:
      return static_cast<float>(reinterpret_cast<const double*>(data)[i]);
    case DType::Bool:
      return reinterpret_cast<const uint8_t*>(data)[i] != 0 ? 1.0f : 0.0f;
  }
  return 0;
}

double loadDoubleAt(DType dtype, const std::byte* data, int64_t i) {
  switch (dtype) {
    case DType::F64:
      return reinterpret_cast<const double*>(data)[i];
    case DType::I64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(data)[i]);
    default:  // every other dtype converts to f32 exactly
      return loadFloatAt(dtype, data, i);
  }
}

void storeDoubleAt(DType dtype, std::byte* data, int64_t i, double value) {
  switch (dtype) {
    case DType::F64:
      reinterpret_cast<double*>(data)[i] = value;
      return;
    case DType::I32:
    case DType::I64:
    case DType::Bool:
      storeIntAt(dtype, data, i, dtype == DType::Bool ? value != 0 : static_cast<int64_t>(value));
      return;
    default:  // f16 and bf16 round from the f32 (as torch's double -> half does not: see docs)
      storeFloatAt(dtype, data, i, static_cast<float>(value));
  }
}

void storeFloatAt(DType dtype, std::byte* data, int64_t i, float value) {
  switch (dtype) {
    case DType::F32:
      reinterpret_cast<float*>(data)[i] = value;
      return;
    case DType::F16:
      reinterpret_cast<uint16_t*>(data)[i] = floatToHalf(value);
      return;
    case DType::BF16:
      reinterpret_cast<uint16_t*>(data)[i] = floatToBFloat16(value);
      return;
    case DType::I32:
      reinterpret_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      return;
    case DType::I64:
      reinterpret_cast<int64_t*>(data)[i] = static_cast<int64_t>(value);
      return;
    case DType::F64:
      reinterpret_cast<double*>(data)[i] = value;
      return;
    case DType::Bool:  // nonzero (NaN too) is true, as torch's conversion to bool
      reinterpret_cast<uint8_t*>(data)[i] = value != 0 ? 1 : 0;
      return;
  }
}

int64_t loadIntAt(DType dtype, const std::byte* data, int64_t i) {
  GXC_CHECK(isInteger(dtype) || dtype == DType::Bool, "integer load from a {} tensor",
            dtypeName(dtype));
  if (dtype == DType::Bool) return reinterpret_cast<const uint8_t*>(data)[i] != 0;
  return dtype == DType::I32 ? reinterpret_cast<const int32_t*>(data)[i]
                             : reinterpret_cast<const int64_t*>(data)[i];
}

void storeIntAt(DType dtype, std::byte* data, int64_t i, int64_t value) {
  GXC_CHECK(isInteger(dtype) || dtype == DType::Bool, "integer store into a {} tensor",
            dtypeName(dtype));
  if (dtype == DType::Bool)
    reinterpret_cast<uint8_t*>(data)[i] = value != 0 ? 1 : 0;
  else if (dtype == DType::I32)
    reinterpret_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
  else
    reinterpret_cast<int64_t*>(data)[i] = value;
}

template <typename Byte>
BasicTensorView<Byte>::BasicTensorView(DType dtype, Shape shape, Byte* data)
    : dtype_(dtype), shape_(std::move(shape)), data_(data) {
  auto n = checkedNumel(shape_);
  GXC_CHECK(n.has_value(), "tensor view of overflowing shape {}", shapeString(shape_));
  numel_ = *n;
  GXC_CHECK(data_ || numel_ == 0, "tensor view of {} elements over no memory", numel_);
}

template <typename Byte>
std::vector<float> BasicTensorView<Byte>::toFloats() const {
  std::vector<float> values(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) values[static_cast<size_t>(i)] = loadFloat(i);
  return values;
}

template class BasicTensorView<std::byte>;
// The read-only view: only the members defined here. Instantiating the whole class would also
// instantiate storeFloat, whose constraint excludes it, which clang 14 does not skip.
template BasicTensorView<const std::byte>::BasicTensorView(DType, Shape, const std::byte*);
template std::vector<float> BasicTensorView<const std::byte>::toFloats() const;

float Tensor::loadFloat(int64_t i) const { return loadFloatAt(dtype_, data(), i); }

void Tensor::storeFloat(int64_t i, float value) { storeFloatAt(dtype_, data(), i, value); }

int64_t Tensor::loadInt(int64_t i) const { return loadIntAt(dtype_, data(), i); }

void Tensor::storeInt(int64_t i, int64_t value) { storeIntAt(dtype_, data(), i, value); }

std::vector<float> Tensor::toFloats() const { return view().toFloats(); }

Tensor Tensor::fromFloats(DType dtype, Shape shape, const std::vector<float>& values) {
  Tensor t(dtype, std::move(shape));
  GXC_CHECK(static_cast<int64_t>(values.size()) == t.numel(), "{} values for {} elements",
            values.size(), t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) t.storeFloat(i, values[static_cast<size_t>(i)]);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  auto n = checkedNumel(shape);
  GXC_CHECK(n && *n == numel_, "reshape of {} elements to {}", numel_, shapeString(shape));
  t.shape_ = std::move(shape);
  return t;
}

namespace {

// A run's tensor or view for `name`, checked to have `type`'s dtype and shape.
template <typename Inputs>
const typename Inputs::mapped_type& checkedInput(const Inputs& inputs, const std::string& name,
                                                 const TensorType& type) {
  auto it = inputs.find(name);
  GXC_CHECK(it != inputs.end(), "no tensor for input '{}'", name);
  GXC_CHECK(it->second.dtype() == type.dtype && it->second.shape() == type.shape,
            "input '{}' does not have its declared type {}", name, type.withoutDevice());
  return it->second;
}

}  // namespace

const Tensor& boundInput(const std::map<std::string, Tensor>& inputs, const std::string& name,
                         const TensorType& type) {
  return checkedInput(inputs, name, type);
}

const ConstTensorView& boundInput(const InputViews& inputs, const std::string& name,
                                  const TensorType& type) {
  return checkedInput(inputs, name, type);
}

std::map<std::string, Tensor> copiesOf(const InputViews& inputs) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, view] : inputs) tensors.emplace(name, Tensor(view));
  return tensors;
}

// The conversions follow IEEE 754 round-to-nearest-even, as CUDA's __float2half_rn and
// __float2bfloat16_rn do, so host and GPU store the same bits.
uint16_t floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past max
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t exponent = absx >> 23;
    uint32_t mantissa = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;  // 14 + (113 - exponent) - 1
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t rebased = absx - 0x38000000u;  // exponent bias 127 -> 15
  uint32_t half = rebased >> 13;
  uint32_t rest = rebased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t x;
  if (exponent == 0x1f) {
    x = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    x = sign;
  } else {  // subnormal: value = mantissa * 2^-24
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

uint16_t floatToBFloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

}  // namespace gxc
