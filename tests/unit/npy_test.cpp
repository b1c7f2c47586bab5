// Tests of the .npy reader and writer: files NumPy wrote (tests/fixtures/io, made by
// make_io_fixtures.py), round trips of every dtype, and one test per refused file asserting
// the exact message.
#include "tensor/npy.h"

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

// A version 1.0 .npy file with the given header dict, padded as NumPy pads it, then `data`.
std::string npyBytes(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

class NpyTest : public iotest::ScratchDirTest {
 protected:
  // The message for a file holding `bytes`, without its "PATH: error: " prefix.
  std::string refusal(const std::string& bytes) {
    std::string file = writeFile("bad.npy", bytes);
    std::string text = modelErrorOf([&] { readNpy(file); });
    EXPECT_EQ(text.rfind(file + ": error: ", 0), 0u) << text;
    return text.substr(std::min(text.size(), file.size() + 9));
  }
};

TEST_F(NpyTest, ReadsEveryDtypeNumPyWrote) {
  for (const char* name : {"f32.npy", "f16.npy", "bf16.npy"}) {
    Tensor t = readNpy(fixture(name));
    EXPECT_EQ(t.shape(), (Shape{2, 3})) << name;
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t.loadFloat(i), floatValue(i)) << name << i;
  }
  EXPECT_EQ(readNpy(fixture("f32.npy")).dtype(), DType::F32);
  EXPECT_EQ(readNpy(fixture("f16.npy")).dtype(), DType::F16);
  EXPECT_EQ(readNpy(fixture("bf16.npy")).dtype(), DType::BF16);  // descr '|V2'
  EXPECT_EQ(readNpy(fixture("bf16.npy"), DType::BF16).dtype(), DType::BF16);

  Tensor f64 = readNpy(fixture("f64.npy"), DType::F64);
  Tensor bools = readNpy(fixture("bool.npy"), DType::Bool);  // descr '|b1'
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(f64.loadDouble(i), floatValue(i));
    EXPECT_EQ(bools.loadInt(i), i % 3 != 0) << i;
  }

  Tensor i32 = readNpy(fixture("i32.npy"), DType::I32);
  Tensor i64 = readNpy(fixture("i64.npy"), DType::I64);
  EXPECT_EQ(i32.shape(), (Shape{2, 3}));
  EXPECT_EQ(i64.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(i32.loadInt(i), i32Value(i));
    EXPECT_EQ(i64.loadInt(i), i64Value(i));
  }
}

TEST_F(NpyTest, ReadsZeroDimArraysAndFormatVersions2And3) {
  Tensor scalar = readNpy(fixture("scalar.npy"));
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.loadFloat(0), -1.5f);

  Tensor v2 = readNpy(fixture("v2.npy"));
  EXPECT_EQ(v2.shape(), (Shape{4}));
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(v2.loadFloat(i), floatValue(i));
  Tensor v3 = readNpy(fixture("v3.npy"));
  EXPECT_EQ(v3.shape(), (Shape{2, 2}));
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(v3.loadInt(i), i32Value(i));
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  for (DType dtype :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::F64, DType::Bool}) {
    for (const Shape& shape : {Shape{2, 3}, Shape{}, Shape{0, 4}, Shape{5}}) {
      Tensor t(dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.storeFloat(i, floatValue(i) * 4);
      std::string file = path("t.npy");
      writeNpy(file, t);
      Tensor back = readNpy(file, dtype);
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.shape(), shape);
      ASSERT_EQ(back.nbytes(), t.nbytes());
      EXPECT_TRUE(std::equal(t.data(), t.data() + t.nbytes(), back.data())) << dtypeName(dtype);
      EXPECT_FALSE(fs::exists(file + ".tmp"));
    }
  }
}

TEST_F(NpyTest, WritesWhatNumPyWrites) {
  // Byte for byte the file np.save made, header padding included.
  writeNpy(path("f32.npy"), readNpy(fixture("f32.npy")));
  EXPECT_EQ(fileBytes(path("f32.npy")), fileBytes(fixture("f32.npy")));
  // bf16 goes out as '<V2', the spelling ml_dtypes gives it.
  writeNpy(path("bf16.npy"), readNpy(fixture("bf16.npy")));
  EXPECT_NE(fileBytes(path("bf16.npy")).find("'descr': '<V2'"), std::string::npos);
  writeNpy(path("f64.npy"), readNpy(fixture("f64.npy")));
  EXPECT_EQ(fileBytes(path("f64.npy")), fileBytes(fixture("f64.npy")));
  writeNpy(path("bool.npy"), readNpy(fixture("bool.npy")));
  EXPECT_EQ(fileBytes(path("bool.npy")), fileBytes(fixture("bool.npy")));
}

TEST_F(NpyTest, FailedWriteThrowsRuntimeErrorAndLeavesNothing) {
  std::string file = path("missing-dir/t.npy");
  try {
    writeNpy(file, Tensor(DType::F32, {2}));
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_EQ(formatError(e), file + ": error: cannot write: No such file or directory");
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NpyTest, RefusesAnotherDtypeThanExpected) {
  std::string file = fixture("f32.npy");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file, DType::I64); }),
            file + ": error: dtype '<f4' (f32) does not match the expected i64");
  file = fixture("bf16.npy");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file, DType::F16); }),
            file + ": error: dtype '|V2' (bf16) does not match the expected f16");
  file = fixture("f64.npy");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file, DType::F32); }),
            file +
                ": error: dtype '<f8' (float64, NumPy's default) does not match the expected "
                "f32; save with x.astype(np.float32)");
}

TEST_F(NpyTest, RefusesMissingFile) {
  std::string file = path("absent.npy");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file); }),
            file + ": error: cannot open: No such file or directory");
}

TEST_F(NpyTest, RefusesBadMagic) {
  EXPECT_EQ(refusal("PK\x03\x04 not an npy file"), "not a .npy file (bad magic)");
  EXPECT_EQ(refusal(""), "not a .npy file (bad magic)");
}

TEST_F(NpyTest, RefusesUnknownFormatVersion) {
  EXPECT_EQ(refusal(std::string("\x93NUMPY\x04\x00\x00\x00", 10)),
            "unsupported .npy format version 4.0 (gxc reads 1.0, 2.0 and 3.0)");
}

TEST_F(NpyTest, RefusesHeaderLengthPastEndOfFile) {
  EXPECT_EQ(refusal(std::string("\x93NUMPY\x01\x00\xe8\x03{'descr'", 18)),
            "header length 1000 past end of file (file has 18 bytes)");
  EXPECT_EQ(refusal(std::string("\x93NUMPY\x02\x00\x01", 9)),
            "header length past end of file (file has 9 bytes)");
}

TEST_F(NpyTest, RefusesFortranOrder) {
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                             std::string(24, '\0'))),
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  // With one dimension above 1 both orders are the same bytes, so the file is read.
  writeFile("column.npy", npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 1), }",
                                   std::string(12, '\0')));
  EXPECT_EQ(readNpy(path("column.npy")).shape(), (Shape{3, 1}));
}

TEST_F(NpyTest, RefusesBigEndian) {
  EXPECT_EQ(refusal(npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                             std::string(8, '\0'))),
            "big-endian dtype '>f4' is not supported; save with arr.astype('<f4')");
}

TEST_F(NpyTest, RefusesUnsupportedDtypes) {
  EXPECT_EQ(refusal(npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                             std::string(16, '\0'))),
            "unsupported dtype '<c8' (gxc reads <f4, <f8, <f2, <i4, <i8, |b1, and <V2 as bf16)");
  EXPECT_EQ(refusal(npyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }",
                             std::string(4, '\0'))),
            "unsupported dtype [('a', '<f4')]: structured arrays are not supported");
}

// Images come as uint8, which gxc has no dtype for: the message is the astype that converts the
// array to the input's dtype, or, where that is not known yet, the usual one.
TEST_F(NpyTest, RefusesIntegerDtypesGxcLacksWithTheAstype) {
  std::string file = writeFile(
      "image.npy",
      npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", std::string(2, '\0')));
  EXPECT_EQ(modelErrorOf([&] { readNpy(file, DType::F32); }),
            file +
                ": error: dtype '|u1' (uint8) is not one gxc reads; save with "
                "x.astype(np.float32)");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file, DType::I64); }),
            file +
                ": error: dtype '|u1' (uint8) is not one gxc reads; save with "
                "x.astype(np.int64)");
  EXPECT_EQ(modelErrorOf([&] { readNpy(file); }),
            file +
                ": error: dtype '|u1' (uint8) is not one gxc reads; save it as the model "
                "input's dtype, such as x.astype(np.float32)");
  EXPECT_EQ(refusal(npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                             std::string(4, '\0'))),
            "dtype '<i2' (int16) is not one gxc reads; save it as the model input's dtype, such "
            "as x.astype(np.float32)");
}

TEST_F(NpyTest, RefusesTruncatedData) {
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                             std::string(20, '\0'))),
            "truncated: data needs 24 bytes at offset 128, file has 148 bytes");
}

TEST_F(NpyTest, RefusesOverflowingAndNegativeShapes) {
  std::string prefix = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  EXPECT_EQ(refusal(npyBytes(prefix + "(4294967296, 4294967296), }", "")),
            "shape (4294967296, 4294967296) overflows");
  EXPECT_EQ(refusal(npyBytes(prefix + "(3037000499, 3037000499), }", "")),  // bytes overflow
            "shape (3037000499, 3037000499) overflows");
  EXPECT_EQ(refusal(npyBytes(prefix + "(99999999999999999999,), }", "")),
            "shape (99999999999999999999,) overflows");
  EXPECT_EQ(refusal(npyBytes(prefix + "(2, -3), }", "")), "shape (2, -3) has a negative dimension");
}

TEST_F(NpyTest, RefusesMalformedHeaders) {
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", "")),
            "malformed header: expected '}' at byte 16 of the header");
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'shape': (2,), }", "")),
            "malformed header: no 'fortran_order' key");
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", "")),
            "malformed header: unexpected key 'x'");
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", "")),
            "malformed header: 'shape' is [2], not a tuple");
  EXPECT_EQ(refusal(npyBytes("{'descr': '<f4', 'descr': '<f4'}", "")),
            "malformed header: duplicate key 'descr' at byte 24 of the header");
  EXPECT_EQ(refusal(npyBytes("{'descr': __import__('os')}", "")),
            "malformed header: unexpected character at byte 10 of the header");
  // Deep nesting is refused before it can exhaust the stack.
  EXPECT_EQ(refusal(npyBytes("{'descr': " + std::string(100000, '['), "")),
            "malformed header: nesting too deep at byte 42 of the header");
}

// Every truncation of a valid file is refused, and thousands of random corruptions are read or
// refused with a gxc::Error, never a crash or a read out of bounds. A corrupted file is read
// only as what it holds: one whose header is intact (the bytes changed are data) must be read,
// with exactly the file's data bytes; one read despite a changed header must still hold as
// many data bytes as its tensor and nothing after them.
TEST_F(NpyTest, TruncatedOrCorruptFilesAreRefusedOrReadAsTheyAre) {
  std::string good = fileBytes(fixture("i64.npy"));
  const size_t dataStart = good.size() - readNpy(fixture("i64.npy")).nbytes();
  for (size_t n = 0; n < good.size(); ++n) {
    std::string file = writeFile("truncated.npy", good.substr(0, n));
    EXPECT_EQ(modelErrorOf([&] { readNpy(file); }).rfind(file + ": error: ", 0), 0u)
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
    std::string file = writeFile("fuzz.npy", bytes);
    try {
      Tensor tensor = readNpy(file);
      ASSERT_LE(tensor.nbytes(), bytes.size());
      size_t start = bytes.size() - tensor.nbytes();
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(tensor.data()), tensor.nbytes()),
                bytes.substr(start))
          << "corruption " << n << ": the tensor is not the file's last " << tensor.nbytes()
          << " bytes";
      if (!headerChanged) {
        EXPECT_EQ(start, dataStart) << "corruption " << n;
        ++readWithDataChanged;
      }
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
