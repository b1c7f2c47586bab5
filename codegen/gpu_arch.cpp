#include "codegen/gpu_arch.h"

#include <fmt/format.h>

#include <cctype>

#include "ir/diagnostic.h"

namespace gxc {

std::string GpuArch::str() const { return fmt::format("sm_{}{}", number(), suffix); }

std::string GpuArch::virtualArch() const { return fmt::format("compute_{}{}", number(), suffix); }

GpuArch defaultGpuArch() { return GpuArch{9, 0, ""}; }

bool archRunsOn(const GpuArch& arch, const GpuArch& gpu) {
  if (arch.suffix == "a") return arch.number() == gpu.number();
  return arch.number() <= gpu.number();
}

GpuArch parseGpuArch(const std::string& text) {
  auto malformed = [&]() -> GpuArch {
    usageError("--arch {}: expected sm_XY such as sm_80 or sm_90 (sm_90a for its own variant)",
               text);
  };
  if (text.rfind("sm_", 0) != 0) return malformed();
  std::string rest = text.substr(3);
  GpuArch arch;
  if (!rest.empty() && rest.back() == 'a') {
    arch.suffix = "a";
    rest.pop_back();
  }
  if (rest.size() < 2 || rest.size() > 3 || rest[0] == '0') return malformed();
  for (char c : rest)
    if (!std::isdigit(static_cast<unsigned char>(c))) return malformed();
  int number = std::stoi(rest);
  arch.major = number / 10;
  arch.minor = number % 10;
  return arch;
}

}  // namespace gxc
