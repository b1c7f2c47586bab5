// Tests of the safetensors reader and writer: files the Python safetensors package wrote
// (tests/fixtures/io, made by make_io_fixtures.py), round trips of every dtype, and one test per
// refused file asserting the exact message.
#include "tensor/safetensors.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "io_test_helpers.h"
#include "ir/diagnostic.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;
using namespace iotest;

// A safetensors file: the 8-byte little-endian header length, the header, then `data`.
std::string safetensorsBytes(const std::string& header, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

class SafetensorsTest : public iotest::ScratchDirTest {
 protected:
  // The message open() gives for a file with this header and data, without "PATH: error: ".
  std::string refusal(const std::string& header, const std::string& data = "") {
    return refusalOf(safetensorsBytes(header, data));
  }
  std::string refusalOf(const std::string& bytes) {
    std::string file = writeFile("bad.safetensors", bytes);
    std::string text = modelErrorOf([&] { SafetensorsFile::open(file); });
    EXPECT_EQ(text.rfind(file + ": error: ", 0), 0u) << text;
    return text.substr(std::min(text.size(), file.size() + 9));
  }
};

TEST_F(SafetensorsTest, ReadsEveryDtypeThePythonWriterWrote) {
  SafetensorsFile file = SafetensorsFile::open(fixture("tensors.safetensors"));
  EXPECT_EQ(file.entries().size(), 8u);
  EXPECT_TRUE(file.contains("f16"));
  EXPECT_FALSE(file.contains("__metadata__"));
  const SafetensorsEntry& f16 = file.entries().at("f16");
  EXPECT_EQ(f16.dtype, DType::F16);
  EXPECT_EQ(f16.shape, (Shape{2, 3}));
  EXPECT_EQ(f16.end - f16.begin, 12u);

  for (const char* name : {"f32", "f16"}) {
    Tensor t = file.read(name);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t.loadFloat(i), floatValue(i)) << name << i;
  }
  Tensor bf16 = SafetensorsFile::open(fixture("bf16.safetensors")).read("bf16");
  EXPECT_EQ(bf16.dtype(), DType::BF16);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(bf16.loadFloat(i), floatValue(i));

  Tensor f64 = file.read("f64");
  Tensor bools = file.read("bool");
  EXPECT_EQ(f64.dtype(), DType::F64);
  EXPECT_EQ(bools.dtype(), DType::Bool);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(f64.loadDouble(i), floatValue(i));
    EXPECT_EQ(bools.loadInt(i), i % 3 != 0) << i;
  }

  Tensor i32 = file.read("i32");
  Tensor i64 = file.read("i64");
  EXPECT_EQ(i32.dtype(), DType::I32);
  EXPECT_EQ(i64.dtype(), DType::I64);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(i32.loadInt(i), i32Value(i));
    EXPECT_EQ(i64.loadInt(i), i64Value(i));
  }
  Tensor scalar = file.read("scalar");
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.loadFloat(0), -1.5f);
  EXPECT_EQ(file.read("empty").shape(), (Shape{0, 3}));
}

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  std::map<std::string, Tensor> tensors;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64}) {
    Tensor t(dtype, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i) t.storeFloat(i, floatValue(i) * 4);
    tensors.emplace(std::string(dtypeName(dtype)), t);
  }
  tensors.emplace("scalar", Tensor::fromFloats(DType::F32, {}, {2.5f}));
  tensors.emplace("empty", Tensor(DType::I64, {3, 0}));
  std::string out = path("t.safetensors");
  writeSafetensors(out, tensors);
  EXPECT_FALSE(fs::exists(out + ".tmp"));
  EXPECT_EQ(fileBytes(out).substr(8).find('{'), 0u);

  SafetensorsFile file = SafetensorsFile::open(out);
  ASSERT_EQ(file.entries().size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    Tensor back = file.read(name);
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_EQ(back.shape(), t.shape()) << name;
    ASSERT_EQ(back.nbytes(), t.nbytes()) << name;
    EXPECT_TRUE(std::equal(t.data(), t.data() + t.nbytes(), back.data())) << name;
  }
}

TEST_F(SafetensorsTest, FailedWriteThrowsRuntimeErrorAndLeavesNothing) {
  std::string out = path("missing-dir/t.safetensors");
  try {
    writeSafetensors(out, {{"w", Tensor(DType::F32, {2})}});
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_EQ(formatError(e), out + ": error: cannot write: No such file or directory");
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SafetensorsTest, RefusesUnknownTensorName) {
  std::string name = fixture("bf16.safetensors");
  SafetensorsFile file = SafetensorsFile::open(name);
  EXPECT_EQ(modelErrorOf([&] { file.read("w"); }), name + ": error: no tensor named 'w'");
}

TEST_F(SafetensorsTest, RefusesMissingFile) {
  std::string file = path("absent.safetensors");
  EXPECT_EQ(modelErrorOf([&] { SafetensorsFile::open(file); }),
            file + ": error: cannot open: No such file or directory");
}

TEST_F(SafetensorsTest, RefusesFileTooShortForHeaderLength) {
  EXPECT_EQ(refusalOf("{}"), "not a safetensors file (2 bytes, too short for the header length)");
}

// The 8-byte length and the '{' after it are what a safetensors file starts with; anything
// else is some other file, and is named so, not reported as a broken header.
TEST_F(SafetensorsTest, RefusesFilesThatAreNotSafetensors) {
  std::string lengthPastEnd = "abcdefgh, some text";
  EXPECT_EQ(refusalOf(lengthPastEnd),
            "not a safetensors file (its first 8 bytes give a header length of "
            "7523094288207667809, past the end of its 19 bytes)");
  EXPECT_EQ(refusalOf(std::string("\x02\0\0\0\0\0\0\0[]", 10)),
            "not a safetensors file (its header does not start with '{')");
  EXPECT_EQ(refusalOf(std::string(8, '\0') + "xyz"),
            "not a safetensors file (its header does not start with '{')");
  EXPECT_EQ(refusalOf(std::string("\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", 26)),
            "not a safetensors file (it is a NumPy .npy file; save weights with "
            "safetensors.numpy.save_file)");
  EXPECT_EQ(refusalOf("PK\x03\x04" + std::string(4, '\0') + "archive/data.pkl"),
            "not a safetensors file (it is a zip archive, as torch.save writes; save the "
            "state_dict with safetensors.torch.save_file)");
}

TEST_F(SafetensorsTest, RefusesMalformedHeaderJson) {
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32",)"),
            "malformed header JSON: parse error at line 1, column 23: syntax error while parsing "
            "object key - unexpected end of input; expected string literal");
  EXPECT_EQ(refusal("{} []"),
            "malformed header JSON: parse error at line 1, column 4: syntax error while parsing "
            "value - unexpected '['; expected end of input");
  EXPECT_EQ(refusal(R"({"__metadata__": {"format": 1}})"),
            "malformed header: __metadata__ must map strings to strings");
  EXPECT_EQ(
      refusal(R"({"w": {"dtype": "F32", "shape": [], "data_offsets": [0, 4], "x": 1}})", "abcd"),
      "tensor 'w': unknown key 'x' in header entry");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", "abcd"),
            "tensor 'w': header entry has no 'shape'");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})"),
            "tensor 'w': shape is not a list of integers");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, -4]}})"),
            "tensor 'w': data_offsets are not two non-negative integers");
}

TEST_F(SafetensorsTest, RefusesUnsupportedDtype) {
  EXPECT_EQ(
      refusal(R"({"w": {"dtype": "U16", "shape": [1], "data_offsets": [0, 2]}})",
              std::string(2, '\0')),
      "tensor 'w': unsupported dtype \"U16\" (gxc reads F32, F64, F16, BF16, I32, I64, BOOL)");
}

TEST_F(SafetensorsTest, RefusesOverflowingAndNegativeShapes) {
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296],)"
                    R"( "data_offsets": [0, 0]}})"),
            "tensor 'w': shape [4294967296,4294967296] overflows");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [18446744073709551615],)"
                    R"( "data_offsets": [0, 0]}})"),
            "tensor 'w': shape [18446744073709551615] overflows");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 0]}})"),
            "tensor 'w': shape [2,-3] has a negative dimension");
}

TEST_F(SafetensorsTest, RefusesOffsetsThatDoNotMatchTheShape) {
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})",
                    std::string(20, '\0')),
            "tensor 'w': data_offsets [0, 20) hold 20 bytes but f32[2,3] needs 24");
  EXPECT_EQ(refusal(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})"),
            "tensor 'w': data_offsets [8, 0) are out of order");
}

TEST_F(SafetensorsTest, RefusesOverlapsHolesAndTrailingBytes) {
  std::string a = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  EXPECT_EQ(refusal("{" + a + R"(, "b": {"dtype": "I32", "shape": [2], "data_offsets": [4, 12]}})",
                    std::string(12, '\0')),
            "tensor 'b': data_offsets [4, 12) overlap tensor 'a'");
  EXPECT_EQ(refusal("{" + a + R"(, "b": {"dtype": "I32", "shape": [2], "data_offsets": [12, 20]}})",
                    std::string(20, '\0')),
            "tensor 'b': data_offsets [12, 20) leave bytes [8, 12) unused");
  EXPECT_EQ(refusal("{" + a + "}", std::string(10, '\0')),
            "2 bytes after the last tensor's data (which ends at offset 77)");
}

TEST_F(SafetensorsTest, RefusesTruncatedData) {
  std::string header = R"({"x": {"dtype": "I64", "shape": [3], "data_offsets": [0, 24]}})";
  EXPECT_EQ(refusal(header, std::string(10, '\0')),
            "truncated: tensor 'x' needs 24 bytes at offset 70, file has 80 bytes");
}

// Every truncation of a valid file is refused, and thousands of random corruptions are read or
// refused with a gxc::Error, never a crash or a read out of bounds. A corrupted file is read
// only as what it holds: one whose header is intact (the bytes changed are data) must be read;
// in any file read, each tensor holds exactly the bytes its offsets name in the data section,
// and the offsets tile that section to the end of the file.
TEST_F(SafetensorsTest, TruncatedOrCorruptFilesAreRefusedOrReadAsTheyAre) {
  std::string good = fileBytes(fixture("tensors.safetensors"));
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i) headerBytes = headerBytes << 8 | static_cast<uint8_t>(good[i]);
  const size_t dataStart = 8 + headerBytes;
  for (size_t n = 0; n < good.size(); ++n) {
    std::string file = writeFile("truncated.safetensors", good.substr(0, n));
    EXPECT_EQ(modelErrorOf([&] { SafetensorsFile::open(file); }).rfind(file + ": error: ", 0), 0u)
        << "a file cut to " << n << " bytes was read";
  }
  std::mt19937 random(7);
  int refused = 0, readWithDataChanged = 0;
  for (int n = 0; n < 4000; ++n) {
    std::string bytes = good;
    bool headerChanged = false;
    for (int flips = 1 + n % 4; flips > 0; --flips) {
      size_t at = random() % bytes.size();
      char value = static_cast<char>(random());
      headerChanged |= at < dataStart && bytes[at] != value;
      bytes[at] = value;
    }
    std::string file = writeFile("fuzz.safetensors", bytes);
    try {
      SafetensorsFile opened = SafetensorsFile::open(file);
      uint64_t start = 0;
      for (int i = 7; i >= 0; --i) start = start << 8 | static_cast<uint8_t>(bytes[i]);
      start += 8;
      uint64_t covered = 0;
      for (const auto& [name, entry] : opened.entries()) {
        Tensor tensor = opened.read(name);
        ASSERT_LE(start + entry.end, bytes.size());
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(tensor.data()), tensor.nbytes()),
                  bytes.substr(start + entry.begin, entry.end - entry.begin))
            << "corruption " << n << ", tensor " << name;
        covered += entry.end - entry.begin;
      }
      EXPECT_EQ(start + covered, bytes.size()) << "corruption " << n;
      if (!headerChanged) ++readWithDataChanged;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Model);
      EXPECT_TRUE(headerChanged) << "corruption " << n << " changed only data: " << e.what();
      ++refused;
    }
  }
  // Both outcomes occurred, so both branches above were exercised.
  EXPECT_GT(refused, 100);
  EXPECT_GT(readWithDataChanged, 100);
}

}  // namespace
}  // namespace gxc
