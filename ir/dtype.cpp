#include "ir/dtype.h"

namespace gxc {

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::F64:
      return "f64";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType d :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::F64, DType::Bool})
    if (dtypeName(d) == name) return d;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::I32:
      return 4;
    case DType::I64:
    case DType::F64:
      return 8;
    case DType::Bool:
      return 1;
  }
  return 0;
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

bool isInteger(DType dtype) { return dtype == DType::I32 || dtype == DType::I64; }

}  // namespace gxc
