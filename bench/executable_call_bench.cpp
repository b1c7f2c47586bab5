// The time of one call of a compiled model inside C++, the floor under a call from Python
// (bench/python_call_overhead.py sets the two side by side): the model compiled for the host
// once (tools/driver/executable.h, what the Python module binds), then Executable::run on an
// input held by the caller, as the module passes it.
//
//   executable_call_bench MODEL.yaml INPUT CALLS   prints the median microseconds of a call
//
// INPUT names the model's one input, filled with ones; every other input gets gxc run's values.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/median_micros.h"
#include "tools/driver/executable.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: executable_call_bench MODEL.yaml INPUT CALLS\n");
    return 2;
  }
  try {
    gxc::CompileOptions options;
    options.modelPath = argv[1];
    options.devices = "cpu";
    gxc::Executable executable(options);
    const gxc::Value* input = executable.graph().find(argv[2]);
    if (!input) {
      std::fprintf(stderr, "executable_call_bench: the model has no input '%s'\n", argv[2]);
      return 2;
    }
    gxc::Tensor ones(input->type.dtype, input->type.shape);
    for (int64_t i = 0; i < ones.numel(); ++i) ones.storeFloat(i, 1.0f);
    gxc::InputViews inputs{{argv[2], ones.view()}};
    double micros = gxc::bench::medianMicros(std::atoi(argv[3]), [&] { executable.run(inputs); });
    std::printf("%.2f\n", micros);
    return 0;
  } catch (const gxc::Error& error) {
    std::fprintf(stderr, "%s\n", gxc::formatError(error, "executable_call_bench").c_str());
    return 1;
  }
}
