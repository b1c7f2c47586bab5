// Tensor types: element type, shape and device. Every IR value carries one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace gxc {

using Shape = std::vector<int64_t>;

// Number of elements, or nullopt when the product overflows int64 (a model that asks for it
// is refused, never wrapped around).
std::optional<int64_t> checkedNumel(const Shape& shape);
std::string shapeString(const Shape& shape);  // "[2,3]"

// Where a value lives. `Unplaced` exists only before assign-devices.
struct Device {
  enum class Kind { Unplaced, Cpu, Cuda };
  Kind kind = Kind::Unplaced;
  int index = 0;  // the N of cuda:N: the N-th entry of the run's device list

  static Device cpu() { return {Kind::Cpu, 0}; }
  static Device cuda(int index) { return {Kind::Cuda, index}; }
  bool placed() const { return kind != Kind::Unplaced; }
  bool isCpu() const { return kind == Kind::Cpu; }
  bool isCuda() const { return kind == Kind::Cuda; }
  std::string str() const;                // "cpu", "cuda:1", "?"
  void appendTo(std::string& out) const;  // str(), appended (the IR printer's one buffer)
  bool operator==(const Device&) const = default;
};

// Accepts "cpu", "cuda" (meaning cuda:0) and "cuda:N".
std::optional<Device> parseDevice(std::string_view text);

struct TensorType {
  bool known = false;  // dtype and shape are meaningful (false before infer-shapes)
  DType dtype = DType::F32;
  Shape shape;
  Device device;

  static TensorType of(DType dtype, Shape shape, Device device = {}) {
    return {true, dtype, std::move(shape), device};
  }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;  // requires known and a shape that was checked not to overflow
  int64_t bytes() const;
  std::string str() const;                                        // "f32[2,3] @cpu", "? @cuda:0"
  std::string withoutDevice() const;                              // "f32[2,3]"
  void appendTo(std::string& out, bool withDevice = true) const;  // str() or withoutDevice()
  bool operator==(const TensorType&) const = default;
};

}  // namespace gxc
