// Tests of the TensorBoard event writer (tools/driver/tensorboard_events.h) on the C++ side:
// CRC-32C against RFC 3720's vectors, the record framing and the Event bytes against values
// worked out independently (TensorBoard's own Python CRC, the protobuf wire format by hand),
// file naming, flushing and the refusals. That TensorBoard itself reads the files back is
// checked by the ctest `tensorboard_events` (tests/train/check_tensorboard.py).
#include "tools/driver/tensorboard_events.h"

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/diagnostic.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint64_t littleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

template <typename T>
std::string bytesOf(T value) {
  std::string out(sizeof value, '\0');
  std::memcpy(out.data(), &value, sizeof value);  // little endian, as x86 and the wire are
  return out;
}

// The data of each record of an event file, checking the framing and both CRCs.
std::vector<std::string> recordsOf(const std::string& file) {
  std::vector<std::string> records;
  std::string_view rest = file;
  while (!rest.empty()) {
    EXPECT_GE(rest.size(), 16u);
    if (rest.size() < 16) break;
    uint64_t length = littleEndian(rest.substr(0, 8));
    EXPECT_EQ(littleEndian(rest.substr(8, 4)), maskedCrc32c(rest.substr(0, 8)));
    EXPECT_GE(rest.size(), 16 + length);
    if (rest.size() < 16 + length) break;
    std::string_view data = rest.substr(12, length);
    EXPECT_EQ(littleEndian(rest.substr(12 + length, 4)), maskedCrc32c(data));
    records.emplace_back(data);
    rest.remove_prefix(16 + length);
  }
  return records;
}

class TensorboardEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gxc-tensorboard-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
};

TEST(Crc32cTest, MatchesRfc3720Vectors) {
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

TEST(Crc32cTest, MaskedAsTensorFlowRecordsStoreIt) {
  // Values of TensorBoard's own masked_crc32c (tensorflow_stub/pywrap_tensorflow.py).
  EXPECT_EQ(maskedCrc32c(""), 0xa282ead8u);
  EXPECT_EQ(maskedCrc32c("123456789"), 0xc78ab0e5u);
}

TEST(TfRecordTest, FramesLengthCrcsAndData) {
  // The record TensorBoard's Python writer makes of "abc".
  const unsigned char expected[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x99,
                                    0x49, 0x0e, 0x61, 0x62, 0x63, 0x6e, 0x57, 0xf1, 0x21};
  EXPECT_EQ(tfRecord("abc"), std::string(std::begin(expected), std::end(expected)));
}

TEST_F(TensorboardEventsTest, NamesTheFileAsTensorboardDoes) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  TensorboardWriter writer(dir_);
  std::string name = fs::path(writer.path()).filename().string();
  EXPECT_TRUE(
      std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\.)" +
                                        std::regex_replace(host, std::regex(R"(\.)"), R"(\.)"))))
      << name;
  EXPECT_EQ(fs::path(writer.path()).parent_path(), fs::path(dir_));
}

TEST_F(TensorboardEventsTest, CreatesMissingFoldersAndNeverOverwritesAFile) {
  std::string nested = dir_ + "/runs/first";
  TensorboardWriter first(nested);
  TensorboardWriter second(nested);  // most likely within the same second
  EXPECT_NE(first.path(), second.path());
  EXPECT_TRUE(fs::exists(first.path()));
  EXPECT_TRUE(fs::exists(second.path()));
}

TEST_F(TensorboardEventsTest, FirstRecordIsTheFileVersionWrittenAtOnce) {
  TensorboardWriter writer(dir_);
  std::vector<std::string> records = recordsOf(readFile(writer.path()));
  ASSERT_EQ(records.size(), 1u);
  // Event: wall_time (field 1, fixed64 double), file_version (field 3, string).
  const std::string& event = records[0];
  ASSERT_EQ(event.size(), 1 + 8 + 2 + 13u);
  EXPECT_EQ(event[0], '\x09');
  double wallTime;
  std::memcpy(&wallTime, event.data() + 1, 8);
  std::string name = fs::path(writer.path()).filename().string();
  EXPECT_EQ(static_cast<int64_t>(wallTime), std::stoll(name.substr(20, 10)));
  EXPECT_EQ(event.substr(9), std::string("\x1a\x0d") + "brain.Event:2");
}

TEST_F(TensorboardEventsTest, ScalarIsASummaryValueWithTensorboardsFieldNumbers) {
  TensorboardWriter writer(dir_);
  writer.addScalar("loss", 0.25, 300, 1.5);
  writer.flush();
  std::vector<std::string> records = recordsOf(readFile(writer.path()));
  ASSERT_EQ(records.size(), 2u);
  // Value: tag (1, string), simple_value (2, float). Summary: value (1, repeated message).
  // Event: wall_time (1, double), step (2, int64 varint: 300 = 0xac 0x02), summary (5).
  std::string value = "\x0a\x04loss\x15" + bytesOf(0.25f);
  std::string summary = "\x0a" + std::string(1, static_cast<char>(value.size())) + value;
  std::string event = "\x09" + bytesOf(1.5) + "\x10\xac\x02" + "\x2a" +
                      std::string(1, static_cast<char>(summary.size())) + summary;
  EXPECT_EQ(records[1], event);
}

TEST_F(TensorboardEventsTest, ValuesAreFloat32AndStepsInt64) {
  TensorboardWriter writer(dir_);
  writer.addScalar("x", 0.1, int64_t{1} << 40, 2.0);
  writer.flush();
  std::vector<std::string> records = recordsOf(readFile(writer.path()));
  ASSERT_EQ(records.size(), 2u);
  // 2^40 as a varint: seven-bit groups 0, 0, 0, 0, 0, then 1 << 5.
  EXPECT_NE(records[1].find("\x10\x80\x80\x80\x80\x80\x20"), std::string::npos);
  EXPECT_NE(records[1].find("\x15" + bytesOf(0.1f)), std::string::npos);
}

TEST_F(TensorboardEventsTest, ScalarsWaitForFlushOrTheDestructor) {
  std::string path;
  {
    TensorboardWriter writer(dir_);
    path = writer.path();
    writer.addScalar("loss", 1.0, 0, 10.0);
    EXPECT_EQ(recordsOf(readFile(path)).size(), 1u);
    writer.flush();
    EXPECT_EQ(recordsOf(readFile(path)).size(), 2u);
    writer.addScalar("loss", 0.5, 1, 11.0);
    writer.addScalar("loss", 0.25, 2, 12.0);
  }
  EXPECT_EQ(recordsOf(readFile(path)).size(), 4u);
}

TEST_F(TensorboardEventsTest, ALargeBufferIsWrittenOutWithoutFlush) {
  TensorboardWriter writer(dir_);
  std::string tag(1000, 't');
  for (int step = 0; step < 2000; ++step) writer.addScalar(tag, 1.0, step, 1.0);
  EXPECT_GT(recordsOf(readFile(writer.path())).size(), 1000u);
}

TEST_F(TensorboardEventsTest, RefusesAFolderThatIsAFile) {
  std::string file = dir_ + "/not-a-folder";
  std::ofstream(file) << "x";
  try {
    TensorboardWriter writer(file);
    FAIL() << "a regular file was taken as the folder";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_EQ(formatError(error), file + ": error: cannot create the folder: Not a directory");
  }
  try {
    TensorboardWriter writer(file + "/sub");
    FAIL() << "a folder under a regular file was created";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_EQ(formatError(error), file + "/sub: error: cannot create the folder: Not a directory");
  }
}

// A file size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) makes write() fail with EFBIG, as a
// full disk would with ENOSPC.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previousHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previousHandler_);
  }

 private:
  rlimit saved_;
  void (*previousHandler_)(int);
};

TEST_F(TensorboardEventsTest, AFailedWriteIsARuntimeErrorNamingTheFileReportedOnce) {
  testing::internal::CaptureStderr();
  {
    FileSizeLimit limit(4096);  // outlives the writer: its destructor writes under it too
    TensorboardWriter writer(dir_);
    std::string tag(1000, 't');
    for (int step = 0; step < 10; ++step) writer.addScalar(tag, 1.0, step, 1.0);
    try {
      writer.flush();
      FAIL() << "10 KB were written under a 4 KB file size limit";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Runtime);
      EXPECT_EQ(formatError(error), writer.path() + ": error: cannot write: File too large");
    }
  }
  // The destructor does not report the same failure a second time.
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace gxc
