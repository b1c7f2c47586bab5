#include "codegen/nvrtc_library.h"

#include "codegen/toolkit_library.h"

namespace gxc {
namespace {

NvrtcApi load() {
  const std::string soname = GXC_NVRTC_SONAME;
  void* library = openToolkitLibrary(GXC_CUDA_LIBRARY_DIR, soname, "compiling for a GPU");
  NvrtcApi api;
  auto resolve = [&](const char* name, auto& function) {
    resolveToolkitFunction(library, soname, name, function);
  };
  resolve("nvrtcGetErrorString", api.getErrorString);
  resolve("nvrtcVersion", api.version);
  resolve("nvrtcGetNumSupportedArchs", api.getNumSupportedArchs);
  resolve("nvrtcGetSupportedArchs", api.getSupportedArchs);
  resolve("nvrtcCreateProgram", api.createProgram);
  resolve("nvrtcDestroyProgram", api.destroyProgram);
  resolve("nvrtcCompileProgram", api.compileProgram);
  resolve("nvrtcGetProgramLogSize", api.getProgramLogSize);
  resolve("nvrtcGetProgramLog", api.getProgramLog);
  resolve("nvrtcGetPTXSize", api.getPTXSize);
  resolve("nvrtcGetPTX", api.getPTX);
  return api;
}

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load();
  return api;
}

}  // namespace gxc
