#include "runtime/host/constant_weights.h"

#include "ir/diagnostic.h"

namespace gxc {

const void* ConstantWeights::packed(const void* plain, const void* layout, size_t bytes,
                                    const std::function<void(void* into)>& pack) {
  auto [it, created] = packed_.try_emplace({plain, layout});
  if (!created) return it->second.get();
  const size_t capacity = (bytes + 63) / 64 * 64;
  it->second.reset(static_cast<std::byte*>(std::aligned_alloc(64, capacity == 0 ? 64 : capacity)));
  if (it->second == nullptr) {
    packed_.erase(it);
    GXC_CHECK(false, "out of host memory for {} bytes of packed weights", capacity);
  }
  try {
    pack(it->second.get());
  } catch (...) {  // nothing half-packed stays behind
    packed_.erase(it);
    throw;
  }
  bytes_ += static_cast<int64_t>(capacity);
  return it->second.get();
}

}  // namespace gxc
