// NVRTC, opened the first time gxc compiles for a GPU rather than when it starts
// (codegen/toolkit_library.h says why): the functions gxc calls, typed by nvrtc.h.
#pragma once

#include <nvrtc.h>

namespace gxc {

struct NvrtcApi {
  decltype(&nvrtcGetErrorString) getErrorString;
  decltype(&nvrtcVersion) version;
  decltype(&nvrtcGetNumSupportedArchs) getNumSupportedArchs;
  decltype(&nvrtcGetSupportedArchs) getSupportedArchs;
  decltype(&nvrtcCreateProgram) createProgram;
  decltype(&nvrtcDestroyProgram) destroyProgram;
  decltype(&nvrtcCompileProgram) compileProgram;
  decltype(&nvrtcGetProgramLogSize) getProgramLogSize;
  decltype(&nvrtcGetProgramLog) getProgramLog;
  decltype(&nvrtcGetPTXSize) getPTXSize;
  decltype(&nvrtcGetPTX) getPTX;
};

// Loaded on the first call (thread-safe); a runtime error (exit 3) where it cannot be.
const NvrtcApi& nvrtc();

}  // namespace gxc
