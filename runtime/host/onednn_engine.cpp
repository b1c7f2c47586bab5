#include "runtime/host/onednn_engine.h"

namespace gxc {

const dnnl::engine& oneDnnEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace gxc
