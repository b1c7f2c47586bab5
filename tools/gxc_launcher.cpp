// gxc, the command: bounds how long OpenMP's waiting threads spin, then runs the engine
// (libexec/gxc beside this file, tools/gxc_main.cpp) with the same arguments.
//
// Why a process of its own. Every host thread of gxc is libgomp's (the generated kernels,
// oneDNN and OpenBLAS share its pool), and libgomp reads its wait policy once, in its
// constructor, before any main() runs; nothing can change it later. Unset, it spins 300,000
// iterations before a waiting thread sleeps: some 16 ms on this project's machines, at 53 ns a
// `pause`. When the scheduler puts two of gxc's threads on one core, as it does while another
// process holds the other core, the thread that waits (at the end of a parallel region, or for
// the next one) spins away the time slice the other needs to get there, and every parallel
// region costs a time slice: a 0.6 ms model then takes 190 ms an iteration (bench/RESULTS.md,
// "a shared machine"). Bounded, a waiting thread gives the core back within kSpinIterations
// pauses. Linked statically (tools/CMakeLists.txt), this launcher adds one exec to a command.
//
// A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept as it is.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Some 0.1 ms at 53 ns a pause (AMD Zen 4), 0.03 ms where a pause takes 15 ns: longer than the
// gaps between the parallel regions of one run, so that on a quiet machine the threads stay
// awake from one kernel to the next, and short against a time slice (3-4 ms). Measured with
// bench/shared_machine_bench.py against 0 (OMP_WAIT_POLICY=passive: the quiet machine's small
// models slower) and larger counts (bench/RESULTS.md).
constexpr const char* kSpinIterations = "2000";

// The engine's path: libexec/gxc in the folder of this executable, symbolic links resolved.
std::string enginePath() {
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return "";
  self[length] = '\0';
  std::string folder(self);
  folder.erase(folder.rfind('/') + 1);
  return folder + "libexec/gxc";
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
    setenv("GOMP_SPINCOUNT", kSpinIterations, 1);
  std::string engine = enginePath();
  if (engine.empty()) {
    std::fprintf(stderr,
                 "gxc: error: cannot find gxc's own executable (/proc/self/exe: %s); "
                 "is /proc mounted?\n",
                 std::strerror(errno));
    return 3;
  }
  execv(engine.c_str(), argv);
  std::fprintf(stderr, "gxc: error: cannot run %s: %s; rebuild gxc (scripts/build.sh)\n",
               engine.c_str(), std::strerror(errno));
  return 3;
}
