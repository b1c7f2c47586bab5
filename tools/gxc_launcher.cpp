// gxc, the command: sets how OpenMP's threads wait and where they run, then runs the engine
// (libexec/gxc beside this file, tools/gxc_main.cpp) with the same arguments.
//
// Why a process of its own. Every host thread of gxc is libgomp's (the generated kernels,
// oneDNN and OpenBLAS share its pool), and libgomp reads its settings once, in its constructor,
// before any main() runs; nothing can change them later. Left to itself, it lets the scheduler
// put two threads of one team on one core, as Linux does when it wakes a thread beside the one
// that woke it while another process holds the other core, and it spins 300,000 iterations
// (some 16 ms here, at 53 ns a `pause`) before a waiting thread sleeps. The thread that waits
// then spins away the time slice that the other needs to get to the barrier, every parallel
// region costs a time slice, and a 0.6 ms model takes 190 ms an iteration, its minimum too
// (docs/performance.md, "A shared machine"). So, unless the user set them:
// - OMP_PROC_BIND=true where a team has more than one thread: each OpenMP thread on a core of
//   its own, so that no two threads of a team ever share one (the engine gives its first
//   thread back every core once libgomp has bound it, runtime/host/host_threads.h);
// - GOMP_SPINCOUNT=kSpinIterations: a thread that waits on a core another process wants gives
//   it back within some 0.5 ms.
// Linked statically (tools/CMakeLists.txt), this launcher adds one exec to a command.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

namespace {

// Some 0.5 ms at 53 ns a pause (AMD Zen 4), less where a pause is shorter: longer than the gaps
// between the parallel regions of a run, so that the threads stay awake from one kernel to the
// next, and short against a time slice (3-4 ms). Measured against 0, 2,000 and libgomp's
// 300,000, quiet, beside a busy process and beside a loaded machine (docs/performance.md).
constexpr const char* kSpinIterations = "10000";

bool userSetAny(std::initializer_list<const char*> variables) {
  for (const char* variable : variables)
    if (std::getenv(variable)) return true;
  return false;
}

// The threads of a team: OMP_NUM_THREADS's first number, else one per core of the affinity,
// as libgomp counts them.
int teamThreads() {
  if (const char* set = std::getenv("OMP_NUM_THREADS")) return std::atoi(set);
  cpu_set_t cores;
  if (sched_getaffinity(0, sizeof cores, &cores) != 0) return 1;
  return CPU_COUNT(&cores);
}

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
  if (!userSetAny({"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}))
    setenv("GOMP_SPINCOUNT", kSpinIterations, 1);
  if (!userSetAny({"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) && teamThreads() > 1)
    setenv("OMP_PROC_BIND", "true", 1);
  std::string engine = enginePath();
  if (engine.empty()) {
    std::fprintf(stderr,
                 "gxc: error: cannot find gxc's own executable (/proc/self/exe: %s); is /proc "
                 "mounted?\n",
                 std::strerror(errno));
    return 3;
  }
  execv(engine.c_str(), argv);
  std::fprintf(stderr, "gxc: error: cannot run %s: %s; rebuild gxc (scripts/build.sh)\n",
               engine.c_str(), std::strerror(errno));
  return 3;
}
