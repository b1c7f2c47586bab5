// NumPy .npy files: the format of gxc's inputs and outputs (`--input x=x.npy`, `--output DIR`).
//
// Reads format versions 1.0, 2.0 and 3.0 holding little-endian, C-ordered f32, f64, f16, i32, i64
// or bool arrays, and bf16 stored as two raw bytes per element (descr '<V2' or '|V2', what
// ml_dtypes and JAX write through np.save). 0-d arrays are read as rank-0 tensors.
//
// Every malformed file is refused with a gxc::Error of kind Model located at the file
// ("x.npy: error: ..."); reading never touches bytes outside the file, whatever it holds.
#pragma once

#include <cstdint>
#include <string>

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "tensor/tensor.h"

namespace gxc {

// Where the .npy parser reads its bytes: a file, or a member of an .npz archive (tensor/npz.h).
// The parser reads at increasing, non-overlapping offsets only, so a source may be a stream.
class NpyByteSource {
 public:
  virtual ~NpyByteSource() = default;
  // The bytes the source holds: every size the header implies is checked against it before
  // anything is allocated, so it must be a size the source has shown it can back.
  virtual uint64_t size() const = 0;
  // False when the source ends before `n` bytes at `offset` could be read.
  virtual bool readAt(uint64_t offset, void* dst, uint64_t n) = 0;
  // What messages call the bytes: "file", "member".
  virtual const char* noun() const = 0;
};

// The tensor `source` holds; errors are model errors at `loc`, as for a file.
Tensor readNpy(NpyByteSource& source, const SourceLoc& loc);

// The tensor stored at `path`, in the dtype the file stores ('<V2' is read as bf16).
Tensor readNpy(const std::string& path);
// As above, but the file's dtype must be `expected` (a bf16 file may be spelled '<V2'/'|V2').
Tensor readNpy(const std::string& path, DType expected);

// The NumPy call that converts an array `x` to `dtype`, for messages: "x.astype(np.float32)".
std::string npyAstype(DType dtype);

// Writes `tensor` as a version 1.0 file (2.0 when the header needs it); bf16 as '<V2' raw
// bits. The file appears complete or not at all: it is written to `path + ".tmp"` and renamed.
// A failed write throws a gxc::Error of kind Runtime.
void writeNpy(const std::string& path, const Tensor& tensor);
// The bytes writeNpy puts before the tensor's data (magic, version, padded header).
std::string npyHeader(const Tensor& tensor);

}  // namespace gxc
