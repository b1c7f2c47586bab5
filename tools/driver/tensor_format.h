// Tensors as `gxc run` prints them on stdout: NumPy's layout, summarized with "..." past
// 1000 elements, so a user can eyeball results without opening the .npy files.
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace gxc {

std::string formatTensor(const Tensor& tensor);

}  // namespace gxc
