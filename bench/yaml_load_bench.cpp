// The floor under `gxc compile` of a big model: how long yaml-cpp alone takes to read the
// file, before gxc reads a single key. bench/RESULTS.md sets it next to the whole command's
// time for the generated chains of bench/gen_chain.py.
//
//   yaml_load_bench FILE.yaml [REPEATS]   prints the medians, in seconds, wall and CPU (the
//                                         process's; on a shared machine the steadier), of
//   - load: YAML::LoadFile, yaml-cpp's node tree (what gxc's frontend read until it had a
//     document of its own);
//   - events: the same text through YAML::Parser to an event handler that keeps nothing,
//     the scanner and parser alone: the floor under any reader built on yaml-cpp;
//   - free: destroying the loaded node tree;
//   - document: the same text read into the frontend's own flat document
//     (frontend/yaml_document.h), built on those events, and freed: what gxc pays today.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/yaml_document.h"

namespace {

// Counts the scalars, so the parse cannot be skipped; keeps nothing else.
class CountingHandler : public YAML::EventHandler {
 public:
  size_t scalars = 0;
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    ++scalars;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

struct Timing {
  std::vector<double> wall, cpu;
  void add(std::chrono::steady_clock::time_point start, std::clock_t cpuStart) {
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu.push_back(static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC);
  }
  static double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: yaml_load_bench FILE.yaml [REPEATS]\n");
    return 2;
  }
  int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "yaml_load_bench: cannot open %s\n", argv[1]);
    return 1;
  }
  std::stringstream text;
  text << file.rdbuf();
  Timing load, events, release, document;
  size_t layers = 0, scalars = 0;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpuStart = std::clock();
    std::optional<YAML::Node> model = YAML::LoadFile(argv[1]);
    load.add(start, cpuStart);
    layers = (*model)["layers"].size();
    start = std::chrono::steady_clock::now();
    cpuStart = std::clock();
    model.reset();
    release.add(start, cpuStart);

    std::istringstream in(text.str());
    start = std::chrono::steady_clock::now();
    cpuStart = std::clock();
    YAML::Parser parser(in);
    CountingHandler handler;
    parser.HandleNextDocument(handler);
    events.add(start, cpuStart);
    scalars = handler.scalars;

    start = std::chrono::steady_clock::now();
    cpuStart = std::clock();
    gxc::YamlDocument::parse(text.str()).reset();
    document.add(start, cpuStart);
  }
  std::printf("%zu layers: yaml-cpp load median %.3f s over %d runs (cpu %.3f s)\n", layers,
              Timing::median(load.wall), repeats, Timing::median(load.cpu));
  std::printf(
      "%zu scalars: events alone median %.3f s (cpu %.3f s); freeing the loaded tree "
      "median %.3f s (cpu %.3f s)\n",
      scalars, Timing::median(events.wall), Timing::median(events.cpu),
      Timing::median(release.wall), Timing::median(release.cpu));
  std::printf("gxc's document (read and freed) median %.3f s (cpu %.3f s)\n",
              Timing::median(document.wall), Timing::median(document.cpu));
  return 0;
}
