// Reading and writing safetensors files (see safetensors.h).
//
// The header is checked as the reference implementation checks it: every entry names a known
// dtype, a non-negative shape and data_offsets holding exactly dtype*shape bytes, and the
// entries tile the data section with no overlap, hole or trailing byte. Validating all of it in
// open() means read() can trust the offsets and never reads outside the file.
#include "tensor/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/diagnostic.h"
#include "ir/progress.h"
#include "tensor/binary_file.h"

namespace gxc {
namespace {

using nlohmann::json;

// Data is copied to and from files byte for byte, which is right only on little-endian hosts.
static_assert(std::endian::native == std::endian::little);

// The reference implementation refuses larger headers; so does gxc, before allocating one.
constexpr uint64_t kMaxHeaderLength = 100'000'000;

// A tensor is read in pieces of this size, each reported to the progress sink.
constexpr uint64_t kReadPieceBytes = uint64_t{64} << 20;

std::optional<DType> dtypeOfName(const std::string& name) {
  if (name == "F32") return DType::F32;
  if (name == "F16") return DType::F16;
  if (name == "BF16") return DType::BF16;
  if (name == "I32") return DType::I32;
  if (name == "I64") return DType::I64;
  if (name == "F64") return DType::F64;
  if (name == "BOOL") return DType::Bool;
  return std::nullopt;
}

std::string nameOfDType(DType dtype) {
  std::string name(dtypeName(dtype));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

// One header entry, checked on its own; how entries fit together is checked by the caller.
SafetensorsEntry parseEntry(const std::string& name, const json& value, const SourceLoc& loc) {
  if (!value.is_object()) modelError(loc, "tensor '{}': header entry is not an object", name);
  for (const auto& [key, field] : value.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      modelError(loc, "tensor '{}': unknown key '{}' in header entry", name, key);
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) modelError(loc, "tensor '{}': header entry has no '{}'", name, key);

  // Values are dumped into messages only once known to be flat: dumping a hostile, deeply
  // nested value would recurse without bound.
  SafetensorsEntry entry;
  const json& dtype = value["dtype"];
  if (!dtype.is_string()) modelError(loc, "tensor '{}': dtype is not a string", name);
  std::optional<DType> known = dtypeOfName(dtype.get<std::string>());
  if (!known)
    modelError(loc,
               "tensor '{}': unsupported dtype {} (gxc reads F32, F64, F16, BF16, I32, I64, BOOL)",
               name, dtype.dump());
  entry.dtype = *known;

  const json& shape = value["shape"];
  if (!shape.is_array() ||
      !std::all_of(shape.begin(), shape.end(), [](const json& d) { return d.is_number_integer(); }))
    modelError(loc, "tensor '{}': shape is not a list of integers", name);
  for (const json& dim : shape) {
    if (!dim.is_number_unsigned())
      modelError(loc, "tensor '{}': shape {} has a negative dimension", name, shape.dump());
    if (dim.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})
      modelError(loc, "tensor '{}': shape {} overflows", name, shape.dump());
    entry.shape.push_back(dim.get<int64_t>());
  }
  std::optional<int64_t> numel = checkedNumel(entry.shape);
  int64_t elementSize = static_cast<int64_t>(dtypeSize(entry.dtype));
  if (!numel || *numel > std::numeric_limits<int64_t>::max() / elementSize)
    modelError(loc, "tensor '{}': shape {} overflows", name, shape.dump());

  const json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    modelError(loc, "tensor '{}': data_offsets are not two non-negative integers", name);
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.begin > entry.end)
    modelError(loc, "tensor '{}': data_offsets [{}, {}) are out of order", name, entry.begin,
               entry.end);
  uint64_t needed = static_cast<uint64_t>(*numel * elementSize);
  if (entry.end - entry.begin != needed)
    modelError(loc, "tensor '{}': data_offsets [{}, {}) hold {} bytes but {}{} needs {}", name,
               entry.begin, entry.end, entry.end - entry.begin, dtypeName(entry.dtype),
               shapeString(entry.shape), needed);
  return entry;
}

template <typename... Args>
[[noreturn]] void notSafetensors(const SourceLoc& loc, fmt::format_string<Args...> format,
                                 Args&&... args) {
  modelError(loc, "not a safetensors file ({})", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SourceLoc loc{path, 0, 0};
  InputFile file(path);
  unsigned char prefix[8];
  if (file.size() < 8 || !file.readAt(0, prefix, 8))
    notSafetensors(loc, "{} bytes, too short for the header length", file.size());
  // Files people pass by mistake are named, with what to do instead.
  if (std::memcmp(prefix, "\x93NUMPY", 6) == 0)
    notSafetensors(loc, "it is a NumPy .npy file; save weights with safetensors.numpy.save_file");
  if (std::memcmp(prefix, "PK\x03\x04", 4) == 0)
    notSafetensors(loc,
                   "it is a zip archive, as torch.save writes; save the state_dict with "
                   "safetensors.torch.save_file");
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | prefix[i];
  // The 8-byte length and the JSON that follows tell a safetensors file from any other.
  if (headerLength > file.size() - 8)
    notSafetensors(loc,
                   "its first 8 bytes give a header length of {}, past the end of its {} bytes",
                   headerLength, file.size());
  char open = 0;
  if (headerLength == 0 || !file.readAt(8, &open, 1) || open != '{')
    notSafetensors(loc, "its header does not start with '{{'");
  if (headerLength > kMaxHeaderLength)
    modelError(loc, "header length {} exceeds the format's limit of {} bytes", headerLength,
               kMaxHeaderLength);
  std::string text(headerLength, '\0');
  if (!file.readAt(8, text.data(), headerLength))
    modelError(loc, "header length {} past end of file (file has {} bytes)", headerLength,
               file.size());

  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) {
    std::string_view what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (size_t bracket = what.find("] "); bracket != std::string_view::npos)
      what.remove_prefix(bracket + 2);
    // The message quotes the offending token, which a hostile header can make huge.
    modelError(loc, "malformed header JSON: {}{}", what.substr(0, 300),
               what.size() > 300 ? "..." : "");
  }
  if (!header.is_object()) modelError(loc, "malformed header JSON: not an object");

  SafetensorsFile result;
  result.path_ = path;
  result.dataStart_ = 8 + headerLength;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      // Free-form string pairs (PyTorch writes {"format": "pt"}); gxc only checks their form.
      bool valid = value.is_object() && std::all_of(value.begin(), value.end(),
                                                    [](const json& v) { return v.is_string(); });
      if (!valid) modelError(loc, "malformed header: __metadata__ must map strings to strings");
      continue;
    }
    result.entries_.emplace(name, parseEntry(name, value, loc));
  }

  // The entries must tile the data section: sorted by offset, each starts where the last ended.
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> order;
  for (const auto& [name, entry] : result.entries_) order.emplace_back(&name, &entry);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->begin, a.second->end) < std::tie(b.second->begin, b.second->end);
  });
  uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const auto& [name, entry] : order) {
    if (entry->begin < covered)
      modelError(loc, "tensor '{}': data_offsets [{}, {}) overlap tensor '{}'", *name, entry->begin,
                 entry->end, *previous);
    if (entry->begin > covered)
      modelError(loc, "tensor '{}': data_offsets [{}, {}) leave bytes [{}, {}) unused", *name,
                 entry->begin, entry->end, covered, entry->begin);
    uint64_t available = file.size() - result.dataStart_;
    if (entry->end > available)
      modelError(loc, "truncated: tensor '{}' needs {} bytes at offset {}, file has {} bytes",
                 *name, entry->end - entry->begin, result.dataStart_ + entry->begin, file.size());
    covered = entry->end;
    previous = name;
  }
  if (result.dataStart_ + covered != file.size())
    modelError(loc, "{} bytes after the last tensor's data (which ends at offset {})",
               file.size() - result.dataStart_ - covered, result.dataStart_ + covered);
  return result;
}

SafetensorsFile SafetensorsFile::inMemory(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;
  file.memory_ = std::make_shared<std::map<std::string, Tensor>>();
  return file;
}

void SafetensorsFile::add(const std::string& name, Tensor tensor) {
  GXC_CHECK(memory_, "add() on the safetensors file {}, which is not held in memory", path_);
  entries_[name] = SafetensorsEntry{tensor.dtype(), tensor.shape(), 0, tensor.nbytes()};
  (*memory_)[name] = std::move(tensor);
}

Tensor SafetensorsFile::readSlice(const std::string& name, int64_t axis, int64_t start,
                                  int64_t end) const {
  SourceLoc loc{path_, 0, 0};
  auto it = entries_.find(name);
  if (it == entries_.end()) modelError(loc, "no tensor named '{}'", name);
  const SafetensorsEntry& entry = it->second;
  const auto rank = static_cast<int64_t>(entry.shape.size());
  if (axis < 0 || axis >= rank || start < 0 || start >= end || end > entry.shape[axis])
    modelError(loc, "tensor '{}' is {}: it has no slice [{}, {}) along axis {}", name,
               shapeString(entry.shape), start, end, axis);
  Shape shape = entry.shape;
  shape[axis] = end - start;
  Tensor tensor(entry.dtype, shape);
  // The header was validated by open(), so these products cannot overflow.
  uint64_t outer = 1, inner = dtypeSize(entry.dtype);
  for (int64_t i = 0; i < axis; ++i) outer *= static_cast<uint64_t>(entry.shape[i]);
  for (int64_t i = axis + 1; i < rank; ++i) inner *= static_cast<uint64_t>(entry.shape[i]);
  const uint64_t run = static_cast<uint64_t>(end - start) * inner;
  const uint64_t stride = static_cast<uint64_t>(entry.shape[axis]) * inner;
  if (memory_) {
    const std::byte* whole = memory_->at(name).data();
    for (uint64_t o = 0; o < outer; ++o)
      std::memcpy(tensor.data() + o * run,
                  whole + o * stride + static_cast<uint64_t>(start) * inner, run);
    return tensor;
  }
  InputFile file(path_);
  ProgressTask progress(fmt::format("reading '{}' from {}", name, path_),
                        static_cast<int64_t>(tensor.nbytes()), ProgressUnit::Bytes);
  for (uint64_t o = 0; o < outer; ++o) {
    uint64_t offset = dataStart_ + entry.begin + o * stride + static_cast<uint64_t>(start) * inner;
    if (!file.readAt(offset, tensor.data() + o * run, run))
      modelError(loc, "truncated: tensor '{}' needs {} bytes at offset {}, file has {} bytes", name,
                 run, offset, file.size());
    progress.advance(static_cast<int64_t>(run));
  }
  return tensor;
}

Tensor SafetensorsFile::read(const std::string& name) const {
  SourceLoc loc{path_, 0, 0};
  auto it = entries_.find(name);
  if (it == entries_.end()) modelError(loc, "no tensor named '{}'", name);
  const SafetensorsEntry& entry = it->second;
  if (memory_) return memory_->at(name);
  InputFile file(path_);
  Tensor tensor(entry.dtype, entry.shape);
  uint64_t offset = dataStart_ + entry.begin;
  // In pieces, so that reading a large tensor shows its progress.
  ProgressTask progress(fmt::format("reading '{}' from {}", name, path_),
                        static_cast<int64_t>(tensor.nbytes()), ProgressUnit::Bytes);
  for (uint64_t done = 0; done < tensor.nbytes(); done += kReadPieceBytes) {
    uint64_t piece = std::min<uint64_t>(kReadPieceBytes, tensor.nbytes() - done);
    // The file may have changed since open(): a short read is reported, never trusted.
    if (!file.readAt(offset + done, tensor.data() + done, piece))
      modelError(loc, "truncated: tensor '{}' needs {} bytes at offset {}, file has {} bytes", name,
                 tensor.nbytes(), offset, file.size());
    progress.advance(static_cast<int64_t>(piece));
  }
  return tensor;
}

void writeSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  SourceLoc loc{path, 0, 0};
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__")
      runtimeError(loc, "cannot write: the tensor name '__metadata__' is reserved");
    header[name] = {{"dtype", nameOfDType(tensor.dtype())},
                    {"shape", tensor.shape()},
                    {"data_offsets", json::array({offset, offset + tensor.nbytes()})}};
    offset += tensor.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::type_error&) {
    runtimeError(loc, "cannot write: a tensor name is not valid UTF-8");
  }
  // Spaces pad the header, as the reference writer does, so the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);

  std::vector<std::string_view> pieces{prefix, text};
  for (const auto& [name, tensor] : tensors)
    pieces.emplace_back(reinterpret_cast<const char*>(tensor.data()), tensor.nbytes());
  writeAtomically(path, pieces);
}

}  // namespace gxc
