#include "codegen/toolkit_library.h"

#include <dlfcn.h>

#include "ir/diagnostic.h"

namespace gxc {

void* openToolkitLibrary(const std::string& folder, const std::string& soname,
                         const std::string& neededFor) {
  std::string bundled = folder + "/" + soname;
  if (void* library = ::dlopen(bundled.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
  if (void* library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
  runtimeError({},
               "cannot load {}, which {} needs: {}; install the CUDA toolkit's libraries or "
               "add their folder to LD_LIBRARY_PATH",
               soname, neededFor, ::dlerror());
}

void* toolkitFunction(void* library, const std::string& soname, const char* name) {
  void* function = ::dlsym(library, name);
  if (!function) runtimeError({}, "{} has no function {}: is it an older version?", soname, name);
  return function;
}

}  // namespace gxc
