#include "runtime/host/host_threads.h"

#include <omp.h>
#include <sched.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace gxc {
namespace {

// Who chose the thread count: OMP_NUM_THREADS, or else libgomp's default, one thread per core
// the process may run on (its CPU affinity, as `taskset` and container runtimes set it).
std::string threadCountSource() {
  if (const char* set = std::getenv("OMP_NUM_THREADS"))
    return fmt::format("OMP_NUM_THREADS={}", set);
  return "one per core of the process's CPU affinity";
}

// libgomp's rule, read from the same variables: GOMP_SPINCOUNT wins, then OMP_WAIT_POLICY
// (passive: no spin; active: 3e10 iterations), then its default of 300,000.
std::string waitPolicy() {
  if (const char* spin = std::getenv("GOMP_SPINCOUNT"))
    return fmt::format("a waiting thread spins {} iterations, then sleeps (GOMP_SPINCOUNT)", spin);
  if (const char* policy = std::getenv("OMP_WAIT_POLICY"))
    return fmt::format("waiting threads follow OMP_WAIT_POLICY={}", policy);
  return "a waiting thread spins 300,000 iterations, then sleeps (libgomp's default: the gxc "
         "command bounds it, libexec/gxc run alone does not)";
}

void addPlaceCores(int place, cpu_set_t& cores) {
  std::vector<int> ids(omp_get_place_num_procs(place));
  omp_get_place_proc_ids(place, ids.data());
  for (int id : ids) CPU_SET(id, &cores);
}

}  // namespace

std::string describeHostThreads() {
  const char* binding = omp_get_proc_bind() == omp_proc_bind_false
                            ? "free to move between cores"
                            : "each on a core of its own (OMP_PROC_BIND)";
  return fmt::format("host threads: {} ({}), {}; {}", omp_get_max_threads(), threadCountSource(),
                     binding, waitPolicy());
}

void runOnEveryCore() {
  if (omp_get_proc_bind() == omp_proc_bind_false) return;
  cpu_set_t cores;
  CPU_ZERO(&cores);
  for (int place = 0; place < omp_get_num_places(); ++place) addPlaceCores(place, cores);
  if (CPU_COUNT(&cores) > 0) sched_setaffinity(0, sizeof cores, &cores);
}

OnFirstOpenMpCore::OnFirstOpenMpCore() {
  if (omp_get_proc_bind() == omp_proc_bind_false || omp_get_num_places() == 0) return;
  cpu_set_t cores;
  CPU_ZERO(&cores);
  addPlaceCores(0, cores);
  bound_ = sched_setaffinity(0, sizeof cores, &cores) == 0;
}

OnFirstOpenMpCore::~OnFirstOpenMpCore() {
  if (bound_) runOnEveryCore();
}

}  // namespace gxc
