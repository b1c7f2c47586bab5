// The host's threads as OpenMP runs them (the generated kernels, oneDNN and OpenBLAS share
// libgomp's one pool): how many, who chose that many, and how long a waiting thread spins
// before it sleeps. `gxc devices` prints it, so that a user on a shared machine can see what
// the command set (tools/gxc_launcher.cpp) and what their environment overrides.
#pragma once

#include <string>

namespace gxc {

// One line, e.g. "host threads: 2 (one per core of the process's CPU affinity); a waiting
// thread spins 2000 iterations, then sleeps (GOMP_SPINCOUNT)".
std::string describeHostThreads();

}  // namespace gxc
