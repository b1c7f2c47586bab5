// GPU architectures as the command line names them (`--arch sm_90`), for NVRTC and ptxas.
//
// Lives outside the NVRTC files so that every build parses `--arch` the same way: a build
// without CUDA refuses the option for what it is (no CUDA), not for a spelling it would have
// accepted.
#pragma once

#include <string>

namespace gxc {

struct GpuArch {
  int major = 9;
  int minor = 0;
  // "a": the architecture-specific variant (sm_90a), whose PTX runs on that GPU only.
  std::string suffix;

  int number() const { return major * 10 + minor; }  // 90, as NVRTC lists them
  std::string str() const;                           // "sm_90"
  std::string virtualArch() const;                   // "compute_90": what PTX targets
};

// The default where neither `--arch` nor a device decides: the H100 the cost model is of.
GpuArch defaultGpuArch();

// Whether code generated for `arch` runs on a GPU of compute capability `gpu` (9.0 is
// {9, 0, ""}): gxc ships PTX, which the driver compiles for any GPU of the PTX's capability
// or a newer one, never an older one; an `a` variant (sm_90a) runs on its own capability only.
bool archRunsOn(const GpuArch& arch, const GpuArch& gpu);

// `sm_XY` or `sm_XYZ` (an optional `a` after the digits); anything else is a usage error
// (exit 2) naming the option. Whether NVRTC supports it is checked when compiling.
GpuArch parseGpuArch(const std::string& text);

}  // namespace gxc
