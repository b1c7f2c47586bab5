// Tests of the .npz reader and writer: archives NumPy wrote (tests/fixtures/npz, made by
// make_npz_fixtures.py), round trips of every dtype, one test per refused archive asserting
// the exact message, and truncations and corruptions that must be refused, never crash.
#include "tensor/npz.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io_test_helpers.h"
#include "ir/diagnostic.h"
#include "tensor/npy.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;
using namespace iotest;

std::string npzFixture(const std::string& name) {
  return std::string(GXC_FIXTURE_DIR) + "/npz/" + name;
}

class NpzTest : public iotest::ScratchDirTest {
 protected:
  // The message for the archive at `file`, without its "FILE: error: " prefix.
  static std::string refusal(const std::string& file) {
    std::string text = modelErrorOf([&] { readNpz(file); });
    EXPECT_EQ(text.rfind(file + ": error: ", 0), 0u) << text;
    return text.substr(std::min(text.size(), file.size() + 9));
  }
};

// What make_npz_fixtures.py saved, in its order, with np.savez and np.savez_compressed.
void expectFixtureArrays(const std::vector<NpzArray>& arrays, const std::string& file) {
  std::vector<std::string> names;
  for (const NpzArray& array : arrays) names.push_back(array.name);
  ASSERT_EQ(names, (std::vector<std::string>{"x", "labels", "mask", "weights", "scale", "empty"}))
      << file;
  const Tensor& x = arrays[0].tensor;
  EXPECT_EQ(x.dtype(), DType::F32);
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(x.loadFloat(i), floatValue(i)) << file;
  const Tensor& labels = arrays[1].tensor;
  EXPECT_EQ(labels.dtype(), DType::I64);
  EXPECT_EQ(labels.shape(), (Shape{4}));
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(labels.loadInt(i), i64Value(i)) << file;
  const Tensor& mask = arrays[2].tensor;
  EXPECT_EQ(mask.dtype(), DType::Bool);
  EXPECT_EQ(mask.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(mask.loadInt(i), i % 3 != 0) << file;
  const Tensor& weights = arrays[3].tensor;
  EXPECT_EQ(weights.dtype(), DType::F64);
  EXPECT_EQ(weights.shape(), (Shape{3}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(weights.loadDouble(i), floatValue(i)) << file;
  const Tensor& scale = arrays[4].tensor;
  EXPECT_EQ(scale.dtype(), DType::F32);
  EXPECT_EQ(scale.rank(), 0);
  EXPECT_EQ(scale.loadFloat(0), -1.5f);
  const Tensor& empty = arrays[5].tensor;
  EXPECT_EQ(empty.dtype(), DType::F32);
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
}

TEST_F(NpzTest, ReadsWhatNpSavezWrote) {
  expectFixtureArrays(readNpz(npzFixture("savez.npz")), "savez.npz");
}

TEST_F(NpzTest, ReadsWhatNpSavezCompressedWrote) {
  expectFixtureArrays(readNpz(npzFixture("compressed.npz")), "compressed.npz");
}

TEST_F(NpzTest, ReadsAnArchiveOfNoArrays) {
  EXPECT_TRUE(readNpz(npzFixture("no_arrays.npz")).empty());  // np.savez(path)
}

TEST_F(NpzTest, RoundTripsEveryDtypeAndShape) {
  std::vector<NpzArray> arrays;
  for (DType dtype :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::F64, DType::Bool}) {
    for (const Shape& shape : {Shape{2, 3}, Shape{}, Shape{0, 4}, Shape{5}}) {
      Tensor t(dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.storeFloat(i, floatValue(i) * 4);
      arrays.push_back({fmt::format("{}_{}", dtypeName(dtype), arrays.size()), std::move(t)});
    }
  }
  std::string file = path("round.npz");
  writeNpz(file, arrays);
  std::vector<NpzArray> back = readNpz(file);
  ASSERT_EQ(back.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Tensor& want = arrays[i].tensor;
    const Tensor& got = back[i].tensor;
    EXPECT_EQ(back[i].name, arrays[i].name);
    EXPECT_EQ(got.dtype(), want.dtype()) << arrays[i].name;
    EXPECT_EQ(got.shape(), want.shape()) << arrays[i].name;
    ASSERT_EQ(got.nbytes(), want.nbytes()) << arrays[i].name;
    EXPECT_TRUE(std::equal(want.data(), want.data() + want.nbytes(), got.data())) << arrays[i].name;
  }
}

// Stored, as np.savez stores: each member is the very .npy file writeNpy writes, uncompressed
// in the archive, under NAME.npy; a file already there is replaced.
TEST_F(NpzTest, WritesMembersStoredAsNpySaves) {
  Tensor x = readNpy(fixture("f32.npy"));
  Tensor labels = readNpy(fixture("i64.npy"));
  std::string file = writeFile("data.npz", "an older file");
  writeNpz(file, {{"x", x}, {"labels", labels}});
  std::string archive = fileBytes(file);
  for (const char* member : {"f32.npy", "i64.npy"}) {
    std::string npy = fileBytes(fixture(member));
    EXPECT_NE(archive.find(npy), std::string::npos) << member << " is not stored as it is";
  }
  EXPECT_NE(archive.find("x.npy"), std::string::npos);
  EXPECT_NE(archive.find("labels.npy"), std::string::npos);
  std::vector<NpzArray> back = readNpz(file);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "x");
  EXPECT_EQ(back[1].name, "labels");
}

TEST_F(NpzTest, FailedWriteThrowsRuntimeError) {
  std::string file = path("missing-dir/data.npz");
  try {
    writeNpz(file, {{"x", Tensor(DType::F32, {2})}});
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_EQ(formatError(e).rfind(file + ": error: cannot write: ", 0), 0u) << formatError(e);
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NpzTest, RefusesMissingFileAndFolder) {
  std::string file = path("absent.npz");
  EXPECT_EQ(modelErrorOf([&] { readNpz(file); }),
            file + ": error: cannot open: No such file or directory");
  EXPECT_EQ(refusal(dir_.string()), "cannot open: Is a directory");
}

TEST_F(NpzTest, RefusesWhatIsNotAZipArchive) {
  EXPECT_EQ(refusal(npzFixture("not_zip.npz")),
            "not a .npz file but a .npy file (np.save writes those; np.savez writes .npz)");
  EXPECT_EQ(refusal(writeFile("text.npz", "x,y\n1,2\n")), "not a .npz file (not a zip archive)");
  EXPECT_EQ(refusal(writeFile("empty.npz", "")), "not a .npz file (the file is empty)");
}

TEST_F(NpzTest, RefusesTruncatedArchive) {
  EXPECT_EQ(refusal(npzFixture("truncated.npz")),
            "truncated: a zip archive without its central directory (the file ends early)");
}

TEST_F(NpzTest, RefusesMemberThatIsNotNpy) {
  EXPECT_EQ(refusal(npzFixture("not_npy_member.npz")),
            "member 'notes.txt' is not a .npy array (an .npz holds NAME.npy members only)");
}

TEST_F(NpzTest, RefusesBadNpyHeaderNamingTheMember) {
  EXPECT_EQ(refusal(npzFixture("bad_header.npz")),
            "member 'y.npy': malformed header: no 'shape' key");
}

TEST_F(NpzTest, RefusesTwoMembersOfTheSameName) {
  EXPECT_EQ(refusal(npzFixture("duplicate.npz")), "two members are named 'x.npy'");
}

TEST_F(NpzTest, RefusesCorruptDeflatedMember) {
  EXPECT_EQ(refusal(npzFixture("corrupt_member.npz")), "member 'x.npy': corrupt: CRC error");
}

TEST_F(NpzTest, RefusesCompressionNpSavezNeverWrites) {
  EXPECT_EQ(refusal(npzFixture("bzip2.npz")),
            "member 'x.npy': compression method 12 is not supported (gxc reads stored and "
            "deflated members, what np.savez and np.savez_compressed write)");
}

// A member claiming 2 GiB is refused from the archive's own sizes, before anything is allocated
// (under AddressSanitizer's allocation limit this would fail loudly otherwise).
TEST_F(NpzTest, RefusesSizeClaimsTheArchiveCannotHold) {
  EXPECT_EQ(refusal(npzFixture("size_claim_stored.npz")),
            "member 'x.npy': corrupt: stored, but claims 2147483648 bytes from 152 stored bytes");
  EXPECT_EQ(refusal(npzFixture("size_claim_deflated.npz")),
            "member 'x.npy': corrupt: claims 2147483648 bytes from 88 deflated bytes, more than "
            "deflate can hold");
}

// Truncations of an archive are refused (at every length through its central directory and
// end record, at a stride before), and random corruptions of a stored and a deflated archive
// are read or refused with a model error, never a crash. The CRC covers every member's bytes,
// so an archive that is still read holds the data it held.
TEST_F(NpzTest, TruncatedOrCorruptArchivesAreRefusedOrReadAsTheyWere) {
  for (const char* name : {"savez.npz", "compressed.npz"}) {
    std::string good = fileBytes(npzFixture(name));
    const size_t directory = good.find("PK\x01\x02");
    ASSERT_NE(directory, std::string::npos) << name;
    for (size_t n = 0; n < good.size(); n += n < directory - 17 ? 17 : 1) {
      std::string file = writeFile("truncated.npz", good.substr(0, n));
      EXPECT_EQ(modelErrorOf([&] { readNpz(file); }).rfind(file + ": error: ", 0), 0u)
          << name << " cut to " << n << " bytes was read";
    }
    std::mt19937 random(11);
    int refused = 0, read = 0;
    for (int n = 0; n < 600; ++n) {
      std::string bytes = good;
      for (int flips = 1 + n % 3; flips > 0; --flips)
        bytes[random() % bytes.size()] = static_cast<char>(random());
      std::string file = writeFile("corrupt.npz", bytes);
      try {
        std::vector<NpzArray> arrays = readNpz(file);
        ++read;
        // A changed byte in a name or a date may leave an archive that reads: its data is
        // intact, checked by the CRC.
        if (arrays.size() == 6) {
          EXPECT_EQ(arrays[0].tensor.toFloats(), readNpz(npzFixture(name))[0].tensor.toFloats());
        }
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Model) << e.what();
        EXPECT_EQ(e.loc().file, file);
        ++refused;
      }
    }
    // Both outcomes occurred, so both branches above were exercised.
    EXPECT_GT(refused, 100) << name;
    EXPECT_GT(read, 10) << name;
  }
}

}  // namespace
}  // namespace gxc
