// The one oneDNN CPU engine of the process, shared by the host's convolutions and attention:
// engines are thread-safe, and making one per call costs more than small primitives do.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace gxc {

const dnnl::engine& oneDnnEngine();

// Primitive attributes with the scratchpad left to the caller, who passes a fresh one
// (DNNL_ARG_SCRATCHPAD, of the primitive descriptor's scratchpad_desc()) at every execution.
// With the library's own, a primitive keeps one scratchpad for all its executions, and two
// threads running the same primitive at once (the sim platform's streams; oneDNN's
// primitive cache hands equal primitives the same implementation) would share it.
dnnl::primitive_attr userScratchpad();

}  // namespace gxc
