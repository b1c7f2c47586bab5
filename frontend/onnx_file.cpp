// Reading ONNX files (see onnx_file.h).
#include "frontend/onnx_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

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

// The external data's file, offset and length, checked against the tensor's size and the
// file's before anything is allocated.
Tensor readExternalData(const onnx::TensorProto& tensor, const OnnxModel& model,
                        std::string_view what, DType dtype, const Shape& shape, uint64_t nbytes) {
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
  if (length && *length != nbytes)
    failAt(model.path, fmt::format("{}: external data length {} is not the {} bytes of its "
                                   "dtype and shape",
                                   what, *length, nbytes));
  std::filesystem::path file = externalDataPath(location, model, what);
  // Checked here, not left to InputFile, so that the message is located at the model.
  std::error_code statError;
  std::filesystem::file_status status = std::filesystem::status(file, statError);
  if (!std::filesystem::exists(status))
    failAt(model.path, fmt::format("{}: external data file '{}' does not exist", what, location));
  if (!std::filesystem::is_regular_file(status))
    failAt(model.path, fmt::format("{}: external data '{}' is not a file", what, location));
  InputFile input(file.string());
  // Written so that neither side can overflow: offset + nbytes might.
  if (offset > input.size() || input.size() - offset < nbytes)
    failAt(model.path, fmt::format("{}: external data file '{}' ends before the {} bytes at "
                                   "offset {} (it holds {} bytes)",
                                   what, location, nbytes, offset, input.size()));
  Tensor out(dtype, shape);
  if (!input.readAt(offset, out.data(), nbytes))
    failAt(model.path, fmt::format("{}: external data file '{}': cannot read its {} bytes at "
                                   "offset {}",
                                   what, location, nbytes, offset));
  return out;
}

// The typed fields: each element in a repeated field of a wider type.
// The caller has checked that the field holds one value per element.
template <typename Field>
void copyTypedField(const Field& field, Tensor& out) {
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

// How many values the typed field of the dtype's ONNX type holds, and its name.
std::pair<int64_t, std::string_view> typedFieldSize(const onnx::TensorProto& tensor, DType dtype) {
  switch (dtype) {
    case DType::F32:
      return {tensor.float_data_size(), "float_data"};
    case DType::F64:
      return {tensor.double_data_size(), "double_data"};
    case DType::I64:
      return {tensor.int64_data_size(), "int64_data"};
    default:
      return {tensor.int32_data_size(), "int32_data"};
  }
}

}  // namespace

OnnxModel readOnnxModelFromBytes(std::string_view bytes, const std::string& path) {
  OnnxModel model;
  model.path = path;
  model.directory = std::filesystem::path(path).parent_path();
  if (model.directory.empty()) model.directory = ".";
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    failAt(path,
           "not an ONNX model: the file does not parse as an onnx.ModelProto (a model "
           "over 2 GB must keep its weights as external data)");
  if (!model.proto.has_graph()) failAt(path, "the ONNX model has no graph");
  model.opset = defaultDomainOpset(model.proto, path);
  return model;
}

OnnxModel readOnnxModel(const std::string& path) {
  InputFile file(path);
  // Protobuf parses no message over 2 GB: refused before reading the file into memory.
  if (file.size() > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    failAt(path, fmt::format("not an ONNX model: the file is {} bytes, over protobuf's 2 GB "
                             "limit (a large model keeps its weights as external data)",
                             file.size()));
  std::string bytes(file.size(), '\0');
  if (!file.readAt(0, bytes.data(), bytes.size())) failAt(path, "cannot read the whole file");
  return readOnnxModelFromBytes(bytes, path);
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
  if (tensor.dims_size() > kMostOnnxTensorRank)
    failAt(model.path, fmt::format("{}: rank {} is over {}, the most gxc reads", what,
                                   tensor.dims_size(), kMostOnnxTensorRank));
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t dim : shape)
    if (dim < 0) failAt(model.path, fmt::format("{}: negative dimension {}", what, dim));
  std::optional<int64_t> numel = checkedNumel(shape);
  uint64_t nbytes = 0;
  if (!numel || __builtin_mul_overflow(static_cast<uint64_t>(*numel), dtypeSize(*dtype), &nbytes))
    failAt(model.path, fmt::format("{}: shape {} has more elements than a tensor can hold", what,
                                   shapeString(shape)));
  // Each source is checked to hold the bytes the shape needs before the tensor is allocated.
  if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    return readExternalData(tensor, model, what, *dtype, shape, nbytes);
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != nbytes)
      failAt(model.path, fmt::format("{}: raw_data holds {} bytes, its dtype and shape need {}",
                                     what, tensor.raw_data().size(), nbytes));
    Tensor out(*dtype, shape);
    if (nbytes > 0) std::memcpy(out.data(), tensor.raw_data().data(), nbytes);
    return out;
  }
  auto [values, fieldName] = typedFieldSize(tensor, *dtype);
  if (values != *numel)
    failAt(model.path, fmt::format("{}: {} holds {} values for {} elements of shape {}", what,
                                   fieldName, values, *numel, shapeString(shape)));
  Tensor out(*dtype, shape);
  switch (*dtype) {
    case DType::F32:
      copyTypedField(tensor.float_data(), out);
      break;
    case DType::F64:
      copyTypedField(tensor.double_data(), out);
      break;
    case DType::I64:
      copyTypedField(tensor.int64_data(), out);
      break;
    default:
      copyTypedField(tensor.int32_data(), out);
      break;
  }
  return out;
}

}  // namespace gxc
