// The default pass pipeline of `gxc run` and `gxc compile`, and the training one.
#pragma once

#include <string>
#include <vector>

namespace gxc {

std::vector<std::string> defaultPipeline();
// `gxc train`'s: the default pipeline with train-mode before data-parallel, and autodiff and
// optimizer before assign-devices (after data-parallel and pipeline-stages, which split the
// batch of the forward they differentiate).
std::vector<std::string> trainingPipeline();

}  // namespace gxc
