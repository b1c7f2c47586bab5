// Byte counts as people read and write them: "7.5 GiB" in messages and reports, "16GiB" on
// the command line. Binary units throughout, as nvidia-smi and torch.cuda.memory_summary
// print memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gxc {

// "512 B", "1.5 KiB", "7.5 GiB": one decimal from KiB up.
std::string formatBytes(int64_t bytes);

// "16GiB", "600KiB", "4096B": a positive integer and one of the units B, KiB, MiB, GiB, with
// no space; nullopt for anything else, zero, or a size past 2^62 bytes.
std::optional<int64_t> parseByteSize(std::string_view text);

}  // namespace gxc
