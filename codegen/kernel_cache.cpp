#include "codegen/kernel_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gxc {
namespace {

// Entry layout: magic line, then the key's length and bytes, then the payload's length,
// bytes and FNV-1a checksum. Lengths and checksum are 16 hex digits, newline-terminated.
constexpr std::string_view kMagic = "gxc-kernel-cache 1\n";

uint64_t fnv1a(std::string_view bytes, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// Each part is length-prefixed, so ("ab","c") and ("a","bc") are different keys.
std::string joinKey(std::string_view kind, const std::vector<std::string>& parts) {
  std::string key = fmt::format("{}:{}\n", kind.size(), kind);
  for (const std::string& part : parts) key += fmt::format("{}:{}\n", part.size(), part);
  return key;
}

std::string hex16(uint64_t value) { return fmt::format("{:016x}\n", value); }

std::optional<uint64_t> readHex16(std::string_view bytes, size_t& at) {
  if (at + 17 > bytes.size() || bytes[at + 16] != '\n') return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < 16; ++i) {
    char c = bytes[at + i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  at += 17;
  return value;
}

}  // namespace

KernelCache::KernelCache(std::optional<std::filesystem::path> directory)
    : directory_(std::move(directory)) {}

KernelCache KernelCache::fromEnvironment() {
  const char* disable = std::getenv("GXC_DISABLE_KERNEL_CACHE");
  if (disable && std::string_view(disable) == "1") return KernelCache(std::nullopt);
  if (const char* dir = std::getenv("GXC_CACHE_DIR")) {
    if (*dir == '\0') return KernelCache(std::nullopt);
    return KernelCache(std::filesystem::path(dir));
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return KernelCache(std::filesystem::path(xdg) / "gxc");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return KernelCache(std::filesystem::path(home) / ".cache" / "gxc");
  }
  return KernelCache(std::nullopt);
}

std::string KernelCache::getOrBuild(std::string_view kind, const std::vector<std::string>& keyParts,
                                    const std::function<std::string()>& build) {
  if (!directory_) {
    ++stats_.compiles;
    return build();
  }
  std::string key = joinKey(kind, keyParts);
  std::filesystem::path file = *directory_ / fmt::format("{:016x}.{}", fnv1a(key), kind);
  if (std::optional<std::string> payload = read(file, key)) {
    ++stats_.hits;
    return *payload;
  }
  ++stats_.compiles;
  std::string payload = build();
  write(file, key, payload);
  return payload;
}

std::optional<std::string> KernelCache::read(const std::filesystem::path& file,
                                             const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;  // a miss
  std::ostringstream contents;
  contents << in.rdbuf();
  std::string bytes = contents.str();
  // Anything that is not a whole, well-formed entry for this key is rebuilt. A different
  // key under the same name is a hash collision, not damage.
  auto damaged = [&]() -> std::optional<std::string> {
    ++stats_.corruptEntries;
    return std::nullopt;
  };
  if (bytes.compare(0, kMagic.size(), kMagic) != 0) return damaged();
  size_t at = kMagic.size();
  std::optional<uint64_t> keySize = readHex16(bytes, at);
  if (!keySize || *keySize > bytes.size() - at) return damaged();
  if (std::string_view(bytes).substr(at, *keySize) != key) return std::nullopt;
  at += *keySize;
  std::optional<uint64_t> payloadSize = readHex16(bytes, at);
  if (!payloadSize || *payloadSize > bytes.size() - at) return damaged();
  std::string payload = bytes.substr(at, *payloadSize);
  at += *payloadSize;
  std::optional<uint64_t> checksum = readHex16(bytes, at);
  if (!checksum || *checksum != fnv1a(payload) || at != bytes.size()) return damaged();
  return payload;
}

void KernelCache::write(const std::filesystem::path& file, const std::string& key,
                        const std::string& payload) const {
  static std::atomic<unsigned> counter{0};
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  if (error) return;
  // A unique temporary name per process and write, then one rename: readers never see a
  // partial entry, and concurrent writers of the same entry both leave a whole one.
  std::filesystem::path temporary =
      file.string() + fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << kMagic << hex16(key.size()) << key << hex16(payload.size()) << payload
        << hex16(fnv1a(payload));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, file, error);
  if (error) std::filesystem::remove(temporary, error);
}

}  // namespace gxc
