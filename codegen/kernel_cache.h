// An on-disk cache of compiled kernels: NVRTC's PTX and the host compiler's shared objects.
//
// Compiling a graph's kernels costs seconds (NVRTC) or more (the host C++ compiler), and the
// same model is compiled again and again, so results are kept on disk, as PyTorch's and
// CuPy's kernel caches do. An entry is keyed by everything that decides its bytes: the
// source text, the target (architecture or host), the compiler and its version, and the
// options. The caller passes those parts; the cache never guesses them.
//
// Where: $GXC_CACHE_DIR, else $XDG_CACHE_HOME/gxc, else $HOME/.cache/gxc. GXC_CACHE_DIR set
// to the empty string, or GXC_DISABLE_KERNEL_CACHE=1, disables the cache (every request
// compiles). Entries are written to a temporary file and renamed into place, so a reader
// sees a whole entry or none, also with several gxc processes at once. Each entry records
// its full key and a checksum of its payload: a truncated or corrupted entry, or a hash
// collision, is detected, rebuilt and rewritten; it is never used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gxc {

struct KernelCacheStats {
  int hits = 0;            // entries read from disk
  int compiles = 0;        // builds run (misses, corrupt entries, or the cache disabled)
  int corruptEntries = 0;  // entries found damaged and rebuilt
};

class KernelCache {
 public:
  // `directory` empty: the cache is disabled and every request builds.
  explicit KernelCache(std::optional<std::filesystem::path> directory);
  // The cache the environment asks for (see above).
  static KernelCache fromEnvironment();

  bool enabled() const { return directory_.has_value(); }
  const std::optional<std::filesystem::path>& directory() const { return directory_; }

  // The artifact for the key made of `keyParts`, read from disk, or built by `build` and
  // stored. `kind` names the artifact family ("ptx", "host-so") and becomes the file
  // suffix. A failure to write the cache (read-only directory, full disk) is not an error:
  // the built artifact is returned and the next run compiles again.
  std::string getOrBuild(std::string_view kind, const std::vector<std::string>& keyParts,
                         const std::function<std::string()>& build);

  const KernelCacheStats& stats() const { return stats_; }

 private:
  std::optional<std::string> read(const std::filesystem::path& file, const std::string& key);
  void write(const std::filesystem::path& file, const std::string& key,
             const std::string& payload) const;

  std::optional<std::filesystem::path> directory_;
  KernelCacheStats stats_;
};

}  // namespace gxc
