#include "runtime/host_arena.h"

#include <cstring>
#include <new>

#include "ir/diagnostic.h"

namespace gxc {

void HostArena::Free::operator()(std::byte* data) const {
  ::operator delete[](data, std::align_val_t(kAlignment));
}

HostArena::HostArena(int64_t bytes) : bytes_(bytes) {
  GXC_CHECK(bytes >= 0, "an arena of {} bytes", bytes);
  if (bytes == 0) return;
  auto size = static_cast<size_t>(bytes);
  data_.reset(static_cast<std::byte*>(::operator new[](size, std::align_val_t(kAlignment))));
  std::memset(data_.get(), 0, size);
}

TensorView HostArena::view(const Value* value, int64_t offset) const {
  int64_t bytes = value->type.bytes();
  GXC_CHECK(offset >= 0 && bytes <= bytes_ - offset,
            "'{}' at [{}, {}) lies outside an arena of {} bytes", value->name, offset,
            offset + bytes, bytes_);
  return {value->type.dtype, value->type.shape, bytes == 0 ? nullptr : data_.get() + offset};
}

}  // namespace gxc
