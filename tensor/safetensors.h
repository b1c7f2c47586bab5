// safetensors files: the weights format of gxc models (what PyTorch and Hugging Face write).
//
// A file is an 8-byte little-endian header length, a JSON header mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end)}, and the data section those offsets index.
// Supported dtypes are F32, F16, BF16, I32 and I64.
//
// open() reads and validates the header only, since weight files may be many gigabytes;
// read() then fetches one tensor's bytes. Every malformed file is refused with a gxc::Error of
// kind Model located at the file, naming the tensor at fault; nothing is ever read outside the
// file, whatever its header claims.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "tensor/tensor.h"

namespace gxc {

struct SafetensorsEntry {
  DType dtype;
  Shape shape;
  uint64_t begin = 0;  // byte offsets within the data section, [begin, end)
  uint64_t end = 0;
};

class SafetensorsFile : public ParamData {
 public:
  // Validates the header: known dtypes, offsets that tile the data section exactly and hold
  // dtype*shape bytes each, and a file long enough for all of them.
  static SafetensorsFile open(const std::string& path);
  // A stand-in for a file, held in memory under `path` (an ONNX model's initializers, which
  // are in no safetensors file): add() puts tensors in; read() and readSlice() copy them out.
  // The graph lowered from them holds it (Graph::attachParamData), and its params read it.
  static SafetensorsFile inMemory(const std::string& path);
  void add(const std::string& name, Tensor tensor);

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // Reads that tensor's bytes from the file; an unknown name is a Model error.
  Tensor read(const std::string& name) const;
  // Reads only [start, end) along `axis` of that tensor (a param shard): one contiguous run
  // of bytes per index of the axes before `axis`, so the whole tensor is never in memory.
  // The range must lie within the tensor's shape (a Model error otherwise).
  Tensor readSlice(const std::string& name, int64_t axis, int64_t start, int64_t end) const;

 private:
  std::string path_;
  std::map<std::string, SafetensorsEntry> entries_;
  uint64_t dataStart_ = 0;  // file offset of the data section
  // Set for a stand-in held in memory; shared by its copies.
  std::shared_ptr<std::map<std::string, Tensor>> memory_;
};

// Writes the tensors in name order, the header padded to a multiple of 8 bytes so that data
// stays aligned. Written to `path + ".tmp"` and renamed, so a failed write (a Runtime error)
// leaves nothing behind.
void writeSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors);

}  // namespace gxc
