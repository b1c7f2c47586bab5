// The host's threads as OpenMP runs them (the generated kernels, oneDNN and OpenBLAS share
// libgomp's one pool): how many, who chose that many, whether each is bound to a core, and how
// long a waiting thread spins before it sleeps; and the cores of the threads that are not
// OpenMP's. `gxc devices` prints it, so that a user on a shared machine can see what
// the command set (tools/gxc_launcher.cpp) and what their environment overrides.
#pragma once

#include <string>

namespace gxc {

// One line, e.g. "host threads: 2 (one per core of the process's CPU affinity), each on a core
// of its own (OMP_PROC_BIND); a waiting thread spins 10000 iterations, then sleeps
// (GOMP_SPINCOUNT)".
std::string describeHostThreads();

// Where OpenMP binds its threads to cores (OMP_PROC_BIND, which the gxc command sets for more
// than one thread), libgomp binds the process's first thread to the first core too, before
// main(), and every thread inherits its creator's cores. A thread that is not OpenMP's (main
// while it compiles, sim streams, staging) calls this first: it runs on
// every core of the OpenMP places, as the process did, wherever the scheduler finds room. Does
// nothing where nothing is bound.
void runOnEveryCore();

// While it lives, the calling thread, which starts OpenMP's parallel regions, runs on the first
// OpenMP place's core, as libgomp bound it: the other threads of its team are each on a core of
// their own, and a master free to move is woken beside one of them, where the two wait on each
// other (docs/performance.md, "A shared machine"). Around a run's or a training's executions;
// gives the thread its cores back after. Does nothing where nothing is bound.
class OnFirstOpenMpCore {
 public:
  OnFirstOpenMpCore();
  ~OnFirstOpenMpCore();
  OnFirstOpenMpCore(const OnFirstOpenMpCore&) = delete;
  OnFirstOpenMpCore& operator=(const OnFirstOpenMpCore&) = delete;

 private:
  bool bound_ = false;
};

}  // namespace gxc
