// Element types of tensors: what is stored, how many bytes, how it is spelled.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gxc {

// Bool is stored as one byte, 0 or 1.
enum class DType { F32, F16, BF16, I32, I64, F64, Bool };

std::string_view dtypeName(DType dtype);                 // "f32", "bf16", ...
std::optional<DType> parseDType(std::string_view name);  // nullopt when unknown
size_t dtypeSize(DType dtype);
bool isFloat(DType dtype);    // f32 f16 bf16 f64
bool isInteger(DType dtype);  // i32 i64 (not bool)

}  // namespace gxc
