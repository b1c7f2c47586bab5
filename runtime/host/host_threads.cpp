#include "runtime/host/host_threads.h"

#include <omp.h>

#include <cstdlib>

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

}  // namespace

std::string describeHostThreads() {
  return fmt::format("host threads: {} ({}); {}", omp_get_max_threads(), threadCountSource(),
                     waitPolicy());
}

}  // namespace gxc
