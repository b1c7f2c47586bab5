// Reading an ONNX model file with ONNX's own protobuf schema (libonnx's onnx_proto): the
// ModelProto, the opset of its default domain, and its initializers and constants as host
// tensors, whether their bytes are in raw_data, in the typed fields, or in external data files
// beside the model (how models over protobuf's 2 GB limit are saved).
//
// Every malformed file is refused with a model error located at the file (and naming the
// tensor at fault): a file that is not a ModelProto, an opset outside the supported range, an
// element type gxc has no dtype for, a negative dim or an absurd rank, data of the wrong size,
// and an external data path that leaves the model's folder (an absolute path, `..`, or a link
// pointing out), which a model from elsewhere must not be able to make gxc read. A tensor's
// size is checked against the bytes it has (raw_data, the typed fields, the external file)
// before anything is allocated, so no file makes gxc allocate more than the file holds.
// Zero dims are read (ONNX has empty tensors, e.g. Resize's unused roi): whether an empty
// tensor may become a gxc value is for whoever uses it to decide.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "ir/dtype.h"
#include "tensor/tensor.h"

namespace gxc {

// The opsets of the default domain gxc reads: 7 (the first where every elementwise op
// broadcasts as NumPy does) to the newest it is tested against. The translators read each op
// in the form of the model's opset (axes as attributes before 13, Softmax's 2-D coercion
// before 13, ...); an attribute of an older form they do not know is refused, never ignored.
constexpr int64_t kOldestOnnxOpset = 7;
constexpr int64_t kNewestOnnxOpset = 28;
// ONNX sets no limit on a tensor's rank; a rank past this one is a malformed file.
constexpr int64_t kMostOnnxTensorRank = 32;

struct OnnxModel {
  std::string path;                 // as given: messages name it
  std::filesystem::path directory;  // external data files are found here, and only here
  onnx::ModelProto proto;
  int64_t opset = 0;  // of the default domain ("" or "ai.onnx")
};

OnnxModel readOnnxModel(const std::string& path);
// The same on the file's bytes, already read: `path` names the model in messages, and its
// folder is where external data is found.
OnnxModel readOnnxModelFromBytes(std::string_view bytes, const std::string& path);

// gxc's dtype for an ONNX element type (TensorProto.DataType), if it has one.
std::optional<DType> dtypeFromOnnx(int32_t elemType);
// The ONNX name of an element type, for messages: "FLOAT", "UINT8", ...
std::string onnxTypeName(int32_t elemType);

// The tensor's elements; `what` names it in messages ("initializer 'fc.weight'").
Tensor readOnnxTensor(const onnx::TensorProto& tensor, const OnnxModel& model,
                      std::string_view what);

}  // namespace gxc
