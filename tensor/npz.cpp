// Reading and writing NumPy .npz archives (see npz.h) with libzip.
//
// A member is parsed as it is decompressed, through the .npy parser's byte source, so an array
// is held once (in its tensor), never also as a buffer of the member's bytes. The sizes the
// zip directory claims are checked against the archive's own size before the .npy parser can
// allocate for them; the CRC of every member is checked once its bytes have all been read.
#include "tensor/npz.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <zip.h>

#include "ir/diagnostic.h"
#include "tensor/binary_file.h"
#include "tensor/npy.h"

namespace gxc {
namespace {

// Deflate cannot expand data more than 1032 times (a 258-byte match coded in 2 bits), so a
// deflated member that claims more is corrupt, whatever its header says.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

struct MemberCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

std::string zipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// One member's bytes as libzip decompresses them, for the .npy parser, which reads forward only:
// a gap before the next read is decompressed and dropped. A read failure or a member shorter
// than its directory entry claims is a corrupt member, not a short read the parser would
// report as a truncated .npy.
class MemberSource : public NpyByteSource {
 public:
  MemberSource(zip_file_t* file, uint64_t size, const SourceLoc& loc)
      : file_(file), size_(size), loc_(loc) {}

  uint64_t size() const override { return size_; }
  const char* noun() const override { return "member"; }
  bool readAt(uint64_t offset, void* dst, uint64_t n) override {
    GXC_CHECK(offset >= position_, ".npy parser read backwards, at {} after {}", offset, position_);
    if (n > size_ || offset > size_ - n) return false;
    skipTo(offset);
    read(static_cast<char*>(dst), n);
    return true;
  }

  // Reads what the parser left (np.load ignores bytes after the data, so does gxc) to the end,
  // where libzip checks the member's CRC.
  void finish() {
    skipTo(size_);
    char extra;
    zip_int64_t got = zip_fread(file_, &extra, 1);
    if (got < 0) modelError(loc_, "corrupt: {}", zip_file_strerror(file_));
    if (got > 0) modelError(loc_, "corrupt: more data than the {} bytes it claims", size_);
  }

 private:
  void skipTo(uint64_t offset) {
    char scratch[1 << 14];
    while (position_ < offset)
      read(scratch, std::min<uint64_t>(sizeof scratch, offset - position_));
  }
  void read(char* dst, uint64_t n) {
    while (n > 0) {
      zip_int64_t got = zip_fread(file_, dst, n);
      if (got < 0) modelError(loc_, "corrupt: {}", zip_file_strerror(file_));
      if (got == 0)
        modelError(loc_, "corrupt: its data ends after {} of the {} bytes it claims", position_,
                   size_);
      dst += got, n -= static_cast<uint64_t>(got), position_ += static_cast<uint64_t>(got);
    }
  }

  zip_file_t* file_;
  uint64_t size_;
  SourceLoc loc_;
  uint64_t position_ = 0;
};

// Checks what the directory says of member `index` against what the archive (of `fileSize`
// bytes) can hold, then parses it. Errors do not name the member: the caller prefixes them.
Tensor readMember(zip_t* archive, zip_uint64_t index, uint64_t fileSize, const SourceLoc& loc) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0)
    modelError(loc, "corrupt: {}", zip_strerror(archive));
  constexpr zip_uint64_t kNeeded =
      ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
  if ((stat.valid & kNeeded) != kNeeded)
    modelError(loc, "corrupt: its directory entry lacks its sizes or methods");
  if (stat.encryption_method != ZIP_EM_NONE) modelError(loc, "encrypted members are not supported");
  if (stat.comp_method != ZIP_CM_STORE && stat.comp_method != ZIP_CM_DEFLATE)
    modelError(loc,
               "compression method {} is not supported (gxc reads stored and deflated members, "
               "what np.savez and np.savez_compressed write)",
               stat.comp_method);
  if (stat.comp_size > fileSize)
    modelError(loc, "corrupt: claims {} compressed bytes, more than the archive's {}",
               stat.comp_size, fileSize);
  if (stat.comp_method == ZIP_CM_STORE && stat.size != stat.comp_size)
    modelError(loc, "corrupt: stored, but claims {} bytes from {} stored bytes", stat.size,
               stat.comp_size);
  if (stat.comp_method == ZIP_CM_DEFLATE && stat.size / kMaxDeflateRatio > stat.comp_size)
    modelError(loc, "corrupt: claims {} bytes from {} deflated bytes, more than deflate can hold",
               stat.size, stat.comp_size);

  std::unique_ptr<zip_file_t, MemberCloser> file(zip_fopen_index(archive, index, 0));
  if (!file) modelError(loc, "cannot read: {}", zip_strerror(archive));
  MemberSource source(file.get(), stat.size, loc);
  Tensor tensor = readNpy(source, loc);
  source.finish();
  return tensor;
}

// The name two members of the archive share, if any, listed without libzip's consistency
// checks (which refuse such an archive without naming the member).
std::string repeatedMemberName(const std::string& path) {
  int code = 0;
  Archive archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  std::set<std::string> seen;
  zip_int64_t count = archive ? zip_get_num_entries(archive.get(), 0) : 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    if (name && !seen.insert(name).second) return name;
  }
  return "";
}

// Why libzip could not open the archive, in the words of the mistake most likely behind it.
[[noreturn]] void refuseArchive(const SourceLoc& loc, int code, std::string_view start) {
  if (code == ZIP_ER_NOZIP && start.starts_with("\x93NUMPY"))
    modelError(loc, "not a .npz file but a .npy file (np.save writes those; np.savez writes .npz)");
  if (code == ZIP_ER_NOZIP && start.starts_with("PK\x03\x04"))
    modelError(loc, "truncated: a zip archive without its central directory (the file ends early)");
  if (code == ZIP_ER_NOZIP) modelError(loc, "not a .npz file (not a zip archive)");
  if (code == ZIP_ER_EXISTS) {
    std::string name = repeatedMemberName(loc.file);
    if (!name.empty()) modelError(loc, "two members are named '{}'", name);
  }
  modelError(loc, "corrupt zip archive: {}", zipErrorText(code));
}

}  // namespace

std::vector<NpzArray> readNpz(const std::string& path) {
  SourceLoc loc{path, 0, 0};
  uint64_t fileSize = 0;
  char start[6] = {};
  {
    // Opened here first for the messages .npy files get (a missing file, a folder), the size
    // that bounds every claim, and the first bytes that tell what a non-archive is.
    InputFile file(path);
    fileSize = file.size();
    file.readAt(0, start, std::min<uint64_t>(sizeof start, fileSize));
  }
  // libzip opens an empty file as an empty archive; NumPy refuses it, and so does gxc.
  if (fileSize == 0) modelError(loc, "not a .npz file (the file is empty)");
  int code = 0;
  Archive archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!archive) refuseArchive(loc, code, std::string_view(start, sizeof start));

  zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  // Two members of the same name were refused by ZIP_CHECKCONS (refuseArchive names them).
  std::vector<NpzArray> arrays;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* rawName = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    if (!rawName) modelError(loc, "corrupt zip archive: {}", zip_strerror(archive.get()));
    std::string member = rawName;
    if (!member.ends_with(".npy"))
      modelError(loc, "member '{}' is not a .npy array (an .npz holds NAME.npy members only)",
                 member);
    if (member == ".npy") modelError(loc, "member '.npy' names no array");
    try {
      arrays.push_back({member.substr(0, member.size() - 4),
                        readMember(archive.get(), static_cast<zip_uint64_t>(i), fileSize, loc)});
    } catch (const Error& error) {
      throw Error(error.kind(), error.loc(),
                  fmt::format("member '{}': {}", member, error.message()));
    }
  }
  return arrays;
}

void writeNpz(const std::string& path, const std::vector<NpzArray>& arrays) {
  SourceLoc loc{path, 0, 0};
  // libzip writes no file for an archive without members (and removes one that was there).
  GXC_CHECK(!arrays.empty(), "writeNpz: no arrays to write to {}", path);
  std::set<std::string> names;
  for (const NpzArray& array : arrays)
    GXC_CHECK(!array.name.empty() && names.insert(array.name).second,
              "writeNpz: array name '{}' is empty or repeated", array.name);

  int code = 0;
  Archive archive(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive) runtimeError(loc, "cannot write: {}", zipErrorText(code));
  auto fail = [&] { runtimeError(loc, "cannot write: {}", zip_strerror(archive.get())); };
  // libzip reads the members' bytes at zip_close: the headers must live until then, and the
  // tensors' data is handed over in place, not copied.
  std::vector<std::string> headers;
  headers.reserve(arrays.size());
  for (const NpzArray& array : arrays) {
    const std::string& header = headers.emplace_back(npyHeader(array.tensor));
    zip_buffer_fragment_t fragments[] = {
        {reinterpret_cast<zip_uint8_t*>(const_cast<char*>(header.data())), header.size()},
        {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(array.tensor.data())),
         array.tensor.nbytes()}};
    zip_source_t* bytes =
        zip_source_buffer_fragment(archive.get(), fragments, array.tensor.nbytes() ? 2 : 1, 0);
    if (!bytes) fail();
    zip_int64_t index =
        zip_file_add(archive.get(), (array.name + ".npy").c_str(), bytes, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(bytes);
      fail();
    }
    if (zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE,
                                 0) != 0)
      fail();
  }
  if (zip_close(archive.get()) != 0) fail();
  archive.release();  // zip_close freed it
}

}  // namespace gxc
