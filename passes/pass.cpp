#include "passes/pass.h"

namespace gxc {

int PassContext::gpuCount() const {
  int count = 0;
  for (const Device& device : devices) count += device.isCuda() ? 1 : 0;
  return count;
}

}  // namespace gxc
