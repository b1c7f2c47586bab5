// Host tensors: a dtype, a shape and a contiguous row-major buffer the tensor owns; and views,
// the same description over bytes someone else owns (an executor's arena).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/tensor_type.h"

namespace gxc {

// Element i of `dtype` data converted to f32 (f16/bf16 widened, integers converted), and back
// with the rounding of the dtype (round to nearest even for f16/bf16); integer dtypes only
// for the integer forms. What Tensor and the views share.
float loadFloatAt(DType dtype, const std::byte* data, int64_t i);
void storeFloatAt(DType dtype, std::byte* data, int64_t i, float value);
int64_t loadIntAt(DType dtype, const std::byte* data, int64_t i);
void storeIntAt(DType dtype, std::byte* data, int64_t i, int64_t value);
// The same in double: exact for f64 and for every dtype f32 holds exactly; i64 rounds beyond
// 2^53. A double stored into an integer dtype truncates toward zero; into bool, nonzero is 1.
double loadDoubleAt(DType dtype, const std::byte* data, int64_t i);
void storeDoubleAt(DType dtype, std::byte* data, int64_t i, double value);

// A dtype and shape over contiguous row-major bytes the view does not own: the caller keeps
// them alive and in place while the view is used. `Byte` is std::byte (TensorView, writable)
// or const std::byte (ConstTensorView); a TensorView converts to a ConstTensorView. Copying a
// view copies the pointer, never the data.
template <typename Byte>
class BasicTensorView {
 public:
  BasicTensorView() = default;
  BasicTensorView(DType dtype, Shape shape, Byte* data);
  template <typename Other>
  requires std::is_convertible_v<Other*, Byte*> BasicTensorView(
      const BasicTensorView<Other>& other)  // NOLINT: TensorView -> ConstTensorView
      : dtype_(other.dtype()), shape_(other.shape()), numel_(other.numel()), data_(other.data()) {}

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtypeSize(dtype_); }
  Byte* data() const { return data_; }
  template <typename T>
  auto* as() const {
    using Element = std::conditional_t<std::is_const_v<Byte>, const T, T>;
    return reinterpret_cast<Element*>(data_);
  }

  float loadFloat(int64_t i) const { return loadFloatAt(dtype_, data_, i); }
  double loadDouble(int64_t i) const { return loadDoubleAt(dtype_, data_, i); }
  int64_t loadInt(int64_t i) const { return loadIntAt(dtype_, data_, i); }
  void storeFloat(int64_t i, float value) const requires(!std::is_const_v<Byte>) {
    storeFloatAt(dtype_, data_, i, value);
  }
  std::vector<float> toFloats() const;

 private:
  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numel_ = 0;
  Byte* data_ = nullptr;
};

using TensorView = BasicTensorView<std::byte>;
using ConstTensorView = BasicTensorView<const std::byte>;

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled
  // A tensor holding a copy of the view's elements.
  explicit Tensor(ConstTensorView view);

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
  int64_t loadInt(int64_t i) const;  // integer dtypes and bool only
  void storeInt(int64_t i, int64_t value);
  double loadDouble(int64_t i) const { return loadDoubleAt(dtype_, data(), i); }
  void storeDouble(int64_t i, double value) { storeDoubleAt(dtype_, data(), i, value); }

  std::vector<float> toFloats() const;
  static Tensor fromFloats(DType dtype, Shape shape, const std::vector<float>& values);
  // Same bytes, other shape (numel must match).
  Tensor reshaped(Shape shape) const;

  // This tensor's bytes as a view: valid while the tensor lives and is not resized.
  TensorView view() { return {dtype_, shape_, data()}; }
  ConstTensorView view() const { return {dtype_, shape_, data()}; }

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
// A run's inputs as views of memory their caller keeps (the Python module's arrays), read
// where they are; the same check.
using InputViews = std::map<std::string, ConstTensorView>;
const ConstTensorView& boundInput(const InputViews& inputs, const std::string& name,
                                  const TensorType& type);
// Owned copies, for an executor that takes tensors (one that copies them to a device anyway).
std::map<std::string, Tensor> copiesOf(const InputViews& inputs);

// IEEE binary16 and bfloat16 conversions, round to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

}  // namespace gxc
