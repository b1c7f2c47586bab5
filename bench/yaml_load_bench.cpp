// The floor under `gxc compile` of a big model: how long yaml-cpp alone takes to load the
// file into nodes, before gxc reads a single key. bench/RESULTS.md sets it next to the
// whole command's time for the generated chains of bench/gen_chain.py.
//
//   yaml_load_bench FILE.yaml [REPEATS]   prints the median load time in seconds, wall and
//                                         CPU (the process's; on a shared machine the steadier)
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: yaml_load_bench FILE.yaml [REPEATS]\n");
    return 2;
  }
  int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::vector<double> seconds, cpuSeconds;
  size_t layers = 0;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpuStart = std::clock();
    YAML::Node model = YAML::LoadFile(argv[1]);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    seconds.push_back(elapsed.count());
    cpuSeconds.push_back(static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC);
    layers = model["layers"].size();
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpuSeconds.begin(), cpuSeconds.end());
  std::printf("%zu layers: yaml-cpp load median %.3f s over %d runs (cpu %.3f s)\n", layers,
              seconds[seconds.size() / 2], repeats, cpuSeconds[cpuSeconds.size() / 2]);
  return 0;
}
