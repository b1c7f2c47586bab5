#include "tensor/binary_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/diagnostic.h"

namespace gxc {

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(errno);
  struct stat info;
  if (::fstat(fd_, &info) != 0) fail(errno);
  if (S_ISDIR(info.st_mode)) fail(EISDIR);
  size_ = static_cast<uint64_t>(info.st_size);
}

InputFile::~InputFile() { ::close(fd_); }

bool InputFile::readAt(uint64_t offset, void* dst, uint64_t n) const {
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got, offset += static_cast<uint64_t>(got), n -= static_cast<uint64_t>(got);
  }
  return true;
}

void InputFile::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  modelError(SourceLoc{path_, 0, 0}, "cannot open: {}", std::strerror(error));
}

int writeWholeFile(const std::string& path, const std::vector<std::string_view>& pieces) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  // The reason is taken from the call that failed, before close or unlink can change errno; a
  // write that makes no progress without an errno is reported as EIO, never as "Success".
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(path.c_str());
    return error != 0 ? error : EIO;
  };
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      ssize_t put = ::write(fd, piece.data(), piece.size());
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) return fail(errno);
      if (put == 0) return fail(EIO);
      piece.remove_prefix(static_cast<size_t>(put));
    }
  }
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(path.c_str());
    return error != 0 ? error : EIO;
  }
  return 0;
}

void writeAtomically(const std::string& path, const std::vector<std::string_view>& pieces) {
  std::string tmp = path + ".tmp";
  int error = writeWholeFile(tmp, pieces);
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
  }
  if (error != 0) runtimeError(SourceLoc{path, 0, 0}, "cannot write: {}", std::strerror(error));
}

}  // namespace gxc
