// Host tensors: a dtype, a shape and a contiguous row-major buffer the tensor owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace gxc {

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }

  // Typed access for the dtype actually stored (f16/bf16 as uint16_t bits).
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }

  // Element i converted to f32 (f16/bf16 widened, integers converted), and back with the
  // rounding of the stored dtype (round to nearest even for f16/bf16).
  float loadFloat(int64_t i) const;
  void storeFloat(int64_t i, float value);
  int64_t loadInt(int64_t i) const;  // integer dtypes only
  void storeInt(int64_t i, int64_t value);

  std::vector<float> toFloats() const;
  static Tensor fromFloats(DType dtype, Shape shape, const std::vector<float>& values);
  // Same bytes, other shape (numel must match).
  Tensor reshaped(Shape shape) const;

 private:
  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numel_ = 0;
  std::vector<std::byte> bytes_;
};

// The tensor bound to `name` in `inputs`, checked to have `type`'s dtype and shape: what
// every executor does with a run's inputs (the driver has already checked them for the user).
const Tensor& boundInput(const std::map<std::string, Tensor>& inputs, const std::string& name,
                         const TensorType& type);

// IEEE binary16 and bfloat16 conversions, round to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

}  // namespace gxc
