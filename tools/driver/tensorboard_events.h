// TensorBoard event files: what `gxc train --tensorboard DIR` writes (cli.md).
//
// A TensorboardWriter creates DIR (and its parents) if needed and in it a new file named as
// TensorBoard's own writers name theirs, `events.out.tfevents.<seconds>.<hostname>` (with
// `.1`, `.2`, ... appended where a file of that name exists already, so that two runs started
// in the same second never overwrite each other). The file is a sequence of records in
// TensorFlow's record format, each an Event message of TensorBoard's schema
// (tensorboard_event.proto): first one with the file's version, "brain.Event:2", written
// and flushed at once so that the file is readable from the start; then one per scalar,
// holding a Summary with one Value {tag, simple_value}. Values are stored as float32, as
// TensorBoard's scalars are.
//
// Records are buffered; flush() writes them out (the caller flushes after each epoch, and a
// large buffer is written out on its own). Any failure to create or write is a runtime
// error (exit 3) that names the file or folder. The destructor writes what is left; a
// failure there, where nothing can be thrown, is printed on stderr (unless an earlier write
// failed already, which the caller was told of).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gxc {

class TensorboardWriter {
 public:
  explicit TensorboardWriter(const std::string& dir);
  ~TensorboardWriter();
  TensorboardWriter(const TensorboardWriter&) = delete;
  TensorboardWriter& operator=(const TensorboardWriter&) = delete;

  // One point of the curve `tag`: `value` at `step`, `wallTime` in seconds since the epoch.
  void addScalar(const std::string& tag, double value, int64_t step, double wallTime);
  void flush();

  const std::string& path() const { return path_; }

 private:
  void appendEvent(const std::string& serializedEvent);

  std::string path_;
  int fd_ = -1;
  std::string pending_;  // framed records not yet written
  bool writeFailed_ = false;
};

// TensorFlow's record framing of one serialized message: its length as uint64 little endian,
// the masked CRC-32C of those 8 bytes (uint32 little endian), the data, the masked CRC-32C
// of the data.
std::string tfRecord(std::string_view data);

// CRC-32C (Castagnoli, as iSCSI's RFC 3720), and the masked form TensorFlow's records store:
// rotated right by 15 bits plus 0xa282ead8, so that a CRC of data holding CRCs stays strong.
uint32_t crc32c(std::string_view data);
uint32_t maskedCrc32c(std::string_view data);

}  // namespace gxc
