// Reading and writing NumPy .npy files (see npy.h).
//
// The header is a Python dict literal. It is parsed by a small recursive-descent parser that
// accepts literals only, with a depth limit, so a hostile header can neither run code (as
// Python's eval would) nor exhaust the stack.
#include "tensor/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "tensor/binary_file.h"

namespace gxc {
namespace {

// Data is copied to and from files byte for byte, which is right only on little-endian hosts.
static_assert(std::endian::native == std::endian::little);

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr int kMaxNesting = 32;

// --- the header dict -----------------------------------------------------------------------

struct PyValue {
  enum class Kind { Str, Bool, Int, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string_view text;           // the literal as written, for messages
  std::string str;                 // Str
  bool boolean = false;            // Bool
  std::optional<int64_t> integer;  // Int; nullopt when it does not fit in int64
  std::vector<PyValue> items;      // Tuple and List elements, Dict values
  std::vector<std::string> keys;   // Dict keys (strings only)
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const SourceLoc& loc) : text_(text), loc_(loc) {}

  PyValue parseDict() {
    PyValue dict = parseValue(0);
    if (dict.kind != PyValue::Kind::Dict) fail("expected a dict");
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    return dict;
  }

 private:
  [[noreturn]] void fail(std::string_view what) {
    modelError(loc_, "malformed header: {} at byte {} of the header", what, pos_);
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!consume(c)) fail(fmt::format("expected '{}'", c));
  }

  PyValue parseValue(int depth) {
    if (depth > kMaxNesting) fail("nesting too deep");
    skipSpace();
    if (pos_ == text_.size()) fail("unexpected end");
    size_t start = pos_;
    char c = text_[pos_];
    PyValue value;
    if (c == '{' || c == '(' || c == '[') {
      value = parseContainer(depth);
    } else if (c == '\'' || c == '"') {
      value.kind = PyValue::Kind::Str;
      value.str = parseString();
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      value.kind = PyValue::Kind::Int;
      value.integer = parseInt();
    } else if (consumeWord("True") || consumeWord("False")) {
      value.kind = PyValue::Kind::Bool;
      value.boolean = c == 'T';
    } else if (!consumeWord("None")) {
      fail("unexpected character");
    }
    value.text = text_.substr(start, pos_ - start);
    return value;
  }

  // A dict, tuple or list; "(x)" without a comma is x itself, as in Python.
  PyValue parseContainer(int depth) {
    char open = text_[pos_++];
    char close = open == '{' ? '}' : open == '(' ? ')' : ']';
    PyValue value;
    value.kind = open == '{'   ? PyValue::Kind::Dict
                 : open == '(' ? PyValue::Kind::Tuple
                               : PyValue::Kind::List;
    bool sawComma = false;
    while (!consume(close)) {
      if (open == '{') {
        PyValue key = parseValue(depth + 1);
        if (key.kind != PyValue::Kind::Str) fail("expected a string key");
        if (std::find(value.keys.begin(), value.keys.end(), key.str) != value.keys.end())
          fail(fmt::format("duplicate key '{}'", key.str));
        value.keys.push_back(key.str);
        expect(':');
      }
      value.items.push_back(parseValue(depth + 1));
      if (!consume(',')) {
        expect(close);
        break;
      }
      sawComma = true;
    }
    if (open == '(' && value.items.size() == 1 && !sawComma) {
      PyValue inner = std::move(value.items[0]);
      return inner;
    }
    return value;
  }

  std::string parseString() {
    char quote = text_[pos_++];
    std::string out;
    while (true) {
      if (pos_ == text_.size() || text_[pos_] == '\n') fail("unterminated string");
      char c = text_[pos_++];
      if (c == quote) return out;
      if (c == '\\') {
        if (pos_ == text_.size()) fail("unterminated string");
        c = text_[pos_++];
      }
      out += c;
    }
  }

  std::optional<int64_t> parseInt() {
    bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    if (pos_ == text_.size() || text_[pos_] < '0' || text_[pos_] > '9') fail("expected a digit");
    std::optional<int64_t> value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int64_t digit = text_[pos_++] - '0';
      if (value && (__builtin_mul_overflow(*value, 10, &*value) ||
                    __builtin_add_overflow(*value, negative ? -digit : digit, &*value)))
        value.reset();
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 longs, as in (3L, 4L)
    return value;
  }

  bool consumeWord(std::string_view word) {
    if (!text_.substr(pos_).starts_with(word)) return false;
    pos_ += word.size();
    return true;
  }

  std::string_view text_;
  SourceLoc loc_;
  size_t pos_ = 0;
};

// --- reading and writing ---------------------------------------------------------------------

// The descr codes gxc reads and writes (written with '<', little endian).
constexpr std::pair<std::string_view, DType> kDescrCodes[] = {
    {"f4", DType::F32}, {"f2", DType::F16}, {"V2", DType::BF16}, {"i4", DType::I32},
    {"i8", DType::I64}, {"f8", DType::F64}, {"b1", DType::Bool}};

// NumPy dtypes gxc has no dtype for, which an astype makes readable: images come as uint8.
constexpr std::pair<std::string_view, std::string_view> kConvertibleCodes[] = {
    {"u1", "uint8"}, {"i1", "int8"},   {"u2", "uint16"},
    {"i2", "int16"}, {"u4", "uint32"}, {"u8", "uint64"}};

// The dtype a descr spells: '<', '=', '|' or no byte order are all little endian here (the only
// order of the hosts gxc runs on); two raw bytes ('V2') are bf16. `expected`, when known, is what
// a file of a dtype gxc lacks is told to convert to.
DType dtypeOfDescr(const PyValue& descr, const SourceLoc& loc, std::optional<DType> expected) {
  if (descr.kind != PyValue::Kind::Str)
    modelError(loc, "unsupported dtype {}: structured arrays are not supported", descr.text);
  std::string_view name = descr.str;
  if (name.starts_with('>'))
    modelError(loc, "big-endian dtype '{}' is not supported; save with arr.astype('<{}')", name,
               name.substr(1));
  std::string_view code = name;
  if (!code.empty() && (code[0] == '<' || code[0] == '=' || code[0] == '|')) code.remove_prefix(1);
  for (auto [known, dtype] : kDescrCodes)
    if (code == known) return dtype;
  for (auto [known, numpyName] : kConvertibleCodes) {
    if (code != known) continue;
    if (expected)
      modelError(loc, "dtype '{}' ({}) is not one gxc reads; save with {}", name, numpyName,
                 npyAstype(*expected));
    modelError(loc,
               "dtype '{}' ({}) is not one gxc reads; save it as the model input's dtype, such as "
               "{}",
               name, numpyName, npyAstype(DType::F32));
  }
  modelError(loc,
             "unsupported dtype '{}' (gxc reads <f4, <f8, <f2, <i4, <i8, |b1, and <V2 as bf16)",
             name);
}

const PyValue& headerField(const PyValue& dict, std::string_view key, const SourceLoc& loc) {
  for (size_t i = 0; i < dict.keys.size(); ++i)
    if (dict.keys[i] == key) return dict.items[i];
  modelError(loc, "malformed header: no '{}' key", key);
}

// A file read where it lies, without loading it first.
class FileSource : public NpyByteSource {
 public:
  explicit FileSource(const std::string& path) : file_(path) {}
  uint64_t size() const override { return file_.size(); }
  bool readAt(uint64_t offset, void* dst, uint64_t n) override {
    return file_.readAt(offset, dst, n);
  }
  const char* noun() const override { return "file"; }

 private:
  InputFile file_;
};

Tensor readNpyFrom(NpyByteSource& source, const SourceLoc& loc, std::optional<DType> expected) {
  // Magic, version, then the header length: 2 bytes in version 1.0, 4 from version 2.0 on.
  unsigned char prefix[12] = {};
  if (source.size() < 8 || !source.readAt(0, prefix, 8) || std::memcmp(prefix, kMagic, kMagicSize))
    modelError(loc, "not a .npy file (bad magic)");
  int major = prefix[6], minor = prefix[7];
  if (minor != 0 || major < 1 || major > 3)
    modelError(loc, "unsupported .npy format version {}.{} (gxc reads 1.0, 2.0 and 3.0)", major,
               minor);
  uint64_t lengthBytes = major == 1 ? 2 : 4;
  if (!source.readAt(8, prefix + 8, lengthBytes))
    modelError(loc, "header length past end of {} ({} has {} bytes)", source.noun(), source.noun(),
               source.size());
  uint64_t headerLength = prefix[8] | (uint64_t{prefix[9]} << 8);
  if (major > 1) headerLength |= (uint64_t{prefix[10]} << 16) | (uint64_t{prefix[11]} << 24);
  uint64_t dataOffset = 8 + lengthBytes + headerLength;
  if (dataOffset > source.size())
    modelError(loc, "header length {} past end of {} ({} has {} bytes)", headerLength,
               source.noun(), source.noun(), source.size());
  std::string text(headerLength, '\0');
  if (!source.readAt(8 + lengthBytes, text.data(), headerLength))
    modelError(loc, "header length {} past end of {} ({} has {} bytes)", headerLength,
               source.noun(), source.noun(), source.size());
  PyValue header = HeaderParser(text, loc).parseDict();
  for (const std::string& key : header.keys)
    if (key != "descr" && key != "fortran_order" && key != "shape")
      modelError(loc, "malformed header: unexpected key '{}'", key);

  DType dtype = dtypeOfDescr(headerField(header, "descr", loc), loc, expected);
  if (expected && dtype == DType::F64 && *expected == DType::F32)
    modelError(loc,
               "dtype '{}' (float64, NumPy's default) does not match the expected f32; save with "
               "{}",
               headerField(header, "descr", loc).str, npyAstype(DType::F32));
  if (expected && dtype != *expected)
    modelError(loc, "dtype '{}' ({}) does not match the expected {}",
               headerField(header, "descr", loc).str, dtypeName(dtype), dtypeName(*expected));

  const PyValue& shapeValue = headerField(header, "shape", loc);
  if (shapeValue.kind != PyValue::Kind::Tuple)
    modelError(loc, "malformed header: 'shape' is {}, not a tuple", shapeValue.text);
  Shape shape;
  for (const PyValue& dim : shapeValue.items) {
    if (dim.kind != PyValue::Kind::Int)
      modelError(loc, "malformed header: 'shape' {} holds a non-integer", shapeValue.text);
    if (!dim.integer) modelError(loc, "shape {} overflows", shapeValue.text);
    if (*dim.integer < 0) modelError(loc, "shape {} has a negative dimension", shapeValue.text);
    shape.push_back(*dim.integer);
  }
  std::optional<int64_t> numel = checkedNumel(shape);
  int64_t elementSize = static_cast<int64_t>(dtypeSize(dtype));
  if (!numel || *numel > std::numeric_limits<int64_t>::max() / elementSize)
    modelError(loc, "shape {} overflows", shapeValue.text);

  // Fortran order only changes the layout when more than one dimension exceeds 1.
  const PyValue& fortran = headerField(header, "fortran_order", loc);
  if (fortran.kind != PyValue::Kind::Bool)
    modelError(loc, "malformed header: 'fortran_order' is {}, not True or False", fortran.text);
  size_t spread = 0;
  for (int64_t d : shape) spread += d > 1;
  if (fortran.boolean && spread > 1)
    modelError(loc, "Fortran-ordered arrays are not supported; save with np.ascontiguousarray");

  // Trailing bytes after the data are ignored, as np.load ignores them.
  uint64_t needed = static_cast<uint64_t>(*numel * elementSize);
  if (needed > source.size() - dataOffset)
    modelError(loc, "truncated: data needs {} bytes at offset {}, {} has {} bytes", needed,
               dataOffset, source.noun(), source.size());
  Tensor tensor(dtype, std::move(shape));
  if (!source.readAt(dataOffset, tensor.data(), needed))
    modelError(loc, "truncated: data needs {} bytes at offset {}, {} has {} bytes", needed,
               dataOffset, source.noun(), source.size());
  return tensor;
}

}  // namespace

std::string npyAstype(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "x.astype(np.float32)";
    case DType::F64:
      return "x.astype(np.float64)";
    case DType::F16:
      return "x.astype(np.float16)";
    case DType::BF16:
      return "x.astype(ml_dtypes.bfloat16)";
    case DType::I32:
      return "x.astype(np.int32)";
    case DType::I64:
      return "x.astype(np.int64)";
    case DType::Bool:
      return "x.astype(np.bool_)";
  }
  GXC_CHECK(false, "npyAstype: dtype {} has no NumPy name", static_cast<int>(dtype));
  return {};
}

Tensor readNpy(const std::string& path) {
  FileSource file(path);
  return readNpyFrom(file, SourceLoc{path, 0, 0}, std::nullopt);
}

Tensor readNpy(const std::string& path, DType expected) {
  FileSource file(path);
  return readNpyFrom(file, SourceLoc{path, 0, 0}, expected);
}

Tensor readNpy(NpyByteSource& source, const SourceLoc& loc) {
  return readNpyFrom(source, loc, std::nullopt);
}

std::string npyHeader(const Tensor& tensor) {
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    shape += fmt::format("{}{}", i ? ", " : "", tensor.shape()[i]);
  shape += tensor.shape().size() == 1 ? ",)" : ")";
  std::string_view code;
  for (auto [known, dtype] : kDescrCodes)
    if (dtype == tensor.dtype()) code = known;
  // One-byte dtypes have no byte order: NumPy spells them with '|'.
  char order = dtypeSize(tensor.dtype()) == 1 ? '|' : '<';
  std::string dict =
      fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': {}, }}", order, code, shape);

  // As np.save does: pad with spaces and a newline so the data starts 64-byte aligned, and
  // move to version 2.0 only when the header outgrows version 1.0's 2-byte length.
  size_t lengthBytes = dict.size() + 1 + 10 + 63 > 0xffff ? 4 : 2;
  size_t unpadded = kMagicSize + 2 + lengthBytes + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(lengthBytes == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return out + dict;
}

void writeNpy(const std::string& path, const Tensor& tensor) {
  writeAtomically(
      path, {npyHeader(tensor), {reinterpret_cast<const char*>(tensor.data()), tensor.nbytes()}});
}

}  // namespace gxc
