// Reading ONNX files (see onnx_file.h).
#include "frontend/onnx_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "ir/diagnostic.h"
#include "tensor/binary_file.h"

namespace gxc {
namespace {

// Tensor bytes are copied as they are stored, little-endian, which is right only on
// little-endian hosts.
static_assert(std::endian::native == std::endian::little);

[[noreturn]] void failAt(const std::string& path, const std::string& message) {
  modelError(SourceLoc{path, 0, 0}, "{}", message);
}

int64_t defaultDomainOpset(const onnx::ModelProto& proto, const std::string& path) {
  for (const onnx::OperatorSetIdProto& opset : proto.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      int64_t version = opset.version();
      if (version < kOldestOnnxOpset)
        failAt(path, fmt::format("opset {} is older than {}, the oldest gxc reads: export again "
                                 "with torch.onnx.export(..., opset_version=17), or convert it "
                                 "with onnx.version_converter.convert_version(model, 17)",
                                 version, kOldestOnnxOpset));
      if (version > kNewestOnnxOpset)
        failAt(path, fmt::format("opset {} is newer than {}, the newest gxc reads: export with "
                                 "opset_version={} or older",
                                 version, kNewestOnnxOpset, kNewestOnnxOpset));
      return version;
    }
  failAt(path, "the model imports no opset of the default ONNX domain");
}

// The file an external tensor's `location` names, refused unless it lies inside the model's
// folder once links are resolved.
std::filesystem::path externalDataPath(const std::string& location, const OnnxModel& model,
                                       std::string_view what) {
  namespace fs = std::filesystem;
  fs::path relative(location);
  if (location.empty() || relative.is_absolute() || relative.has_root_name())
    failAt(model.path, fmt::format("{}: external data location '{}' must be a path relative to "
                                   "the model's folder",
                                   what, location));
  for (const fs::path& part : relative)
    if (part == "..")
      failAt(model.path, fmt::format("{}: external data location '{}' leaves the model's folder",
                                     what, location));
  std::error_code folderError, fileError;
  fs::path folder = fs::weakly_canonical(model.directory, folderError);
  fs::path file = fs::weakly_canonical(model.directory / relative, fileError);
  if (folderError || fileError)
    failAt(model.path, fmt::format("{}: external data '{}': {}", what, location,
                                   (folderError ? folderError : fileError).message()));
  auto [end, _] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
  if (end != folder.end())
    failAt(model.path, fmt::format("{}: external data location '{}' leads out of the model's "
                                   "folder (to {})",
                                   what, location, file.string()));
  return file;
}

void readExternalData(const onnx::TensorProto& tensor, const OnnxModel& model,
                      std::string_view what, Tensor& out) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  auto number = [&](const std::string& key, const std::string& text) {
    char* end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-')
      failAt(model.path,
             fmt::format("{}: external data {} '{}' is not a byte count", what, key, text));
    return static_cast<uint64_t>(value);
  };
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = number("offset", entry.value());
    else if (entry.key() == "length")
      length = number("length", entry.value());
    else  // "checksum" among them: a check gxc cannot make is not claimed
      failAt(model.path, fmt::format("{}: external data key '{}' is not supported (gxc reads "
                                     "location, offset and length)",
                                     what, entry.key()));
  }
  if (length && *length != out.nbytes())
    failAt(model.path, fmt::format("{}: external data length {} is not the {} bytes of its "
                                   "dtype and shape",
                                   what, *length, out.nbytes()));
  std::filesystem::path file = externalDataPath(location, model, what);
  InputFile input(file.string());
  if (!input.readAt(offset, out.data(), out.nbytes()))
    failAt(model.path, fmt::format("{}: external data file '{}' ends before bytes {}..{}", what,
                                   location, offset, offset + out.nbytes()));
}

// The typed fields: each element in a repeated field of a wider type.
template <typename Field>
void copyTypedField(const Field& field, std::string_view fieldName, const OnnxModel& model,
                    std::string_view what, Tensor& out) {
  if (field.size() != out.numel())
    failAt(model.path, fmt::format("{}: {} holds {} values for {} elements", what, fieldName,
                                   field.size(), out.numel()));
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto value = field.Get(static_cast<int>(i));
    switch (out.dtype()) {
      case DType::F32:
        out.as<float>()[i] = static_cast<float>(value);
        break;
      case DType::F64:
        out.as<double>()[i] = static_cast<double>(value);
        break;
      case DType::I64:
        out.as<int64_t>()[i] = static_cast<int64_t>(value);
        break;
      case DType::I32:
        out.as<int32_t>()[i] = static_cast<int32_t>(value);
        break;
      case DType::Bool:
        out.as<uint8_t>()[i] = value != 0;
        break;
      case DType::F16:
      case DType::BF16:  // their bits, in the low half of an int32
        out.as<uint16_t>()[i] = static_cast<uint16_t>(value);
        break;
    }
  }
}

}  // namespace

OnnxModel readOnnxModel(const std::string& path) {
  OnnxModel model;
  model.path = path;
  model.directory = std::filesystem::path(path).parent_path();
  if (model.directory.empty()) model.directory = ".";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) failAt(path, fmt::format("cannot open: {}", std::strerror(errno)));
  bool parsed = false;
  {
    google::protobuf::io::FileInputStream stream(fd);
    stream.SetCloseOnDelete(true);
    parsed = model.proto.ParseFromZeroCopyStream(&stream);
  }
  if (!parsed)
    failAt(path,
           "not an ONNX model: the file does not parse as an onnx.ModelProto (a model "
           "over 2 GB must keep its weights as external data)");
  if (!model.proto.has_graph()) failAt(path, "the ONNX model has no graph");
  model.opset = defaultDomainOpset(model.proto, path);
  return model;
}

std::optional<DType> dtypeFromOnnx(int32_t elemType) {
  switch (elemType) {
    case onnx::TensorProto_DataType_FLOAT:
      return DType::F32;
    case onnx::TensorProto_DataType_FLOAT16:
      return DType::F16;
    case onnx::TensorProto_DataType_BFLOAT16:
      return DType::BF16;
    case onnx::TensorProto_DataType_DOUBLE:
      return DType::F64;
    case onnx::TensorProto_DataType_INT32:
      return DType::I32;
    case onnx::TensorProto_DataType_INT64:
      return DType::I64;
    case onnx::TensorProto_DataType_BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

std::string onnxTypeName(int32_t elemType) {
  if (onnx::TensorProto_DataType_IsValid(elemType))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elemType));
  return fmt::format("element type {}", elemType);
}

Tensor readOnnxTensor(const onnx::TensorProto& tensor, const OnnxModel& model,
                      std::string_view what) {
  std::optional<DType> dtype = dtypeFromOnnx(tensor.data_type());
  if (!dtype)
    failAt(model.path, fmt::format("{}: {} tensors are not supported (gxc has FLOAT, FLOAT16, "
                                   "BFLOAT16, DOUBLE, INT32, INT64 and BOOL)",
                                   what, onnxTypeName(tensor.data_type())));
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t dim : shape)
    if (dim < 0) failAt(model.path, fmt::format("{}: negative dimension {}", what, dim));
  if (!checkedNumel(shape)) failAt(model.path, fmt::format("{}: too many elements", what));
  Tensor out(*dtype, shape);
  if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    readExternalData(tensor, model, what, out);
  } else if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != out.nbytes())
      failAt(model.path, fmt::format("{}: raw_data holds {} bytes, its dtype and shape need {}",
                                     what, tensor.raw_data().size(), out.nbytes()));
    std::memcpy(out.data(), tensor.raw_data().data(), out.nbytes());
  } else {
    switch (*dtype) {
      case DType::F32:
        copyTypedField(tensor.float_data(), "float_data", model, what, out);
        break;
      case DType::F64:
        copyTypedField(tensor.double_data(), "double_data", model, what, out);
        break;
      case DType::I64:
        copyTypedField(tensor.int64_data(), "int64_data", model, what, out);
        break;
      default:
        copyTypedField(tensor.int32_data(), "int32_data", model, what, out);
        break;
    }
  }
  return out;
}

}  // namespace gxc
