#include "target/byte_size.h"

#include <charconv>
#include <iterator>

#include <fmt/format.h>

namespace gxc {

std::string formatBytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::optional<int64_t> parseByteSize(std::string_view text) {
  int64_t amount = 0;
  auto [unitStart, ec] = std::from_chars(text.data(), text.data() + text.size(), amount);
  std::string_view unit(unitStart, static_cast<size_t>(text.data() + text.size() - unitStart));
  int shift = unit == "B" ? 0 : unit == "KiB" ? 10 : unit == "MiB" ? 20 : unit == "GiB" ? 30 : -1;
  if (ec != std::errc() || amount <= 0 || shift < 0 || amount > (int64_t{1} << (62 - shift)))
    return std::nullopt;
  return amount << shift;
}

}  // namespace gxc
