// The one oneDNN CPU engine of the process, shared by the host's convolutions and attention:
// engines are thread-safe, and making one per call costs more than small primitives do.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace gxc {

const dnnl::engine& oneDnnEngine();

}  // namespace gxc
