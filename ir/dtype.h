// Element types of tensors: what is stored, how many bytes, how it is spelled.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gxc {

enum class DType { F32, F16, BF16, I32, I64 };

std::string_view dtypeName(DType dtype);                 // "f32", "bf16", ...
std::optional<DType> parseDType(std::string_view name);  // nullopt when unknown
size_t dtypeSize(DType dtype);
bool isFloat(DType dtype);
bool isInteger(DType dtype);

}  // namespace gxc
