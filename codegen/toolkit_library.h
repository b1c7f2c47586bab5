// A CUDA toolkit library opened the first time it is needed, not when gxc starts.
//
// Linked in, libcublasLt (over 500 MB) and libnvrtc are mapped and relocated at every start:
// about 0.15 s and 200 MB of memory for every command, most of which never touch a GPU or
// compile for one (compile to IR, run on cpu or sim, gxc-opt). Each user of one (NVRTC here,
// cuBLASLt in runtime/cuda) keeps a table of the functions it calls, typed by the library's
// own header (decltype), filled once from the library this opens.
#pragma once

#include <string>

namespace gxc {

// Opens `soname` ("libnvrtc.so.13") from `folder` (the toolkit gxc was built against), else
// wherever the loader's search path finds it; never closed. One that cannot be opened is a
// runtime error (exit 3) saying what needs it and how to provide it.
void* openToolkitLibrary(const std::string& folder, const std::string& soname,
                         const std::string& neededFor);

// The function `name` of a library openToolkitLibrary opened; a runtime error if it has none.
void* toolkitFunction(void* library, const std::string& soname, const char* name);

template <typename Function>
void resolveToolkitFunction(void* library, const std::string& soname, const char* name,
                            Function& function) {
  function = reinterpret_cast<Function>(toolkitFunction(library, soname, name));
}

}  // namespace gxc
