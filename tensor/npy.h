// NumPy .npy files: the format of gxc's inputs and outputs (`--input x=x.npy`, `--output DIR`).
//
// Reads format versions 1.0, 2.0 and 3.0 holding little-endian, C-ordered f32, f64, f16, i32, i64
// or bool arrays, and bf16 stored as two raw bytes per element (descr '<V2' or '|V2', what
// ml_dtypes and JAX write through np.save). 0-d arrays are read as rank-0 tensors.
//
// Every malformed file is refused with a gxc::Error of kind Model located at the file
// ("x.npy: error: ..."); reading never touches bytes outside the file, whatever it holds.
#pragma once

#include <string>

#include "ir/dtype.h"
#include "tensor/tensor.h"

namespace gxc {

// The tensor stored at `path`, in the dtype the file stores ('<V2' is read as bf16).
Tensor readNpy(const std::string& path);
// As above, but the file's dtype must be `expected` (a bf16 file may be spelled '<V2'/'|V2').
Tensor readNpy(const std::string& path, DType expected);

// Writes `tensor` as a version 1.0 file (2.0 when the header needs it); bf16 as '<V2' raw
// bits. The file appears complete or not at all: it is written to `path + ".tmp"` and renamed.
// A failed write throws a gxc::Error of kind Runtime.
void writeNpy(const std::string& path, const Tensor& tensor);

}  // namespace gxc
