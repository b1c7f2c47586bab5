// What `gxc run` and `gxc compile` share: the model loaded, the run's devices decided, the
// default pipeline run with the dumps the user asked for.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "tools/driver/device_list.h"

namespace gxc {

struct CompileOptions {
  std::string modelPath;
  std::string devices;  // the --devices text; empty: every GPU, or cpu where there is none
  std::string simGpus;  // the --sim-gpus text; empty: no virtual GPUs
  bool strict = false;
  std::string placement = "manual";  // --placement: manual, auto, data-parallel or pipeline
  int microbatches = 0;              // --microbatches (pipeline); 0: the number of devices
  bool explain = false;              // --explain: each layer's device and why, on stderr
  // `train --bucket-mb`: data-parallel training's gradient buckets, in bytes (DDP's default).
  int64_t bucketBytes = 25 * 1024 * 1024;
  std::string weightsPath;
  bool weightsPartial = false;    // --weights-partial
  std::vector<std::string> dims;  // --dim NAME=N, as given
  // `run`: the input files given (--input), read before the model is compiled since they
  // bind its symbolic dimensions.
  std::map<std::string, GivenInput> givenInputs;
  std::string arch;                // --arch sm_XX as given; empty: the device's, or sm_90
  PassManagerOptions passes;       // --print-ir-after, --dump-ir, --time-passes
  const GpuProbe* gpus = nullptr;  // tests: fake real GPUs; null: this machine's
  // `train`: the command line's overrides of the model's train: section, on the loaded graph.
  std::function<void(Graph&)> beforePasses;
};

struct CompiledModel {
  std::unique_ptr<Graph> graph;
  DeviceList devices;  // host only, or the GPUs behind cuda:0, cuda:1, ...
  SimGpusOption sim;   // the virtual GPUs, when the run has them
  Target target;       // the devices as the passes planned for them, and the platform runs on
  // An ONNX model's input names that are not valid gxc names, with the names gxc gave them.
  std::vector<std::pair<std::string, std::string>> renamedInputs;
  // Per integer input, the bound of the values a run gives it when no file does
  // (defaultInputBound), taken before the passes, so that placement never changes them.
  std::map<std::string, int64_t> defaultInputBounds;
};

// What the compiled model is for: `gxc run` runs it, `gxc compile` only writes it out; the
// note of a run that found no GPU says which ("running on" or "compiling for" the host).
// `gxc train` compiles the training step (passes/pipeline.h, trainingPipeline).
enum class CompileFor { Run, Emit, Train };

// A usage error (status 2) unless --microbatches M goes with --placement pipeline, M >= 1.
void checkMicrobatchesOption(const std::string& placement, int microbatches);
// `--placement` and `--microbatches`, as every command checks them (a usage error otherwise):
// `microbatchesGiven` when the caller set --microbatches.
void checkPlacementOptions(const CompileOptions& options, bool microbatchesGiven);

// Resolves the devices (usage errors first), loads the model, then says in one note, only
// once the model has been read, where a run that found no GPU goes; then the passes.
CompiledModel compileModel(const CompileOptions& options, CompileFor purpose, std::ostream& notes);

// The gxc executable ends when its command does, so what a command is done with may be left to
// the operating system instead of freed object by object (as clang leaves its AST at exit,
// -disable-free): a tenth of a second for a graph of 100,000 layers. Only main() says so;
// in-process callers (tests) free everything as usual.
void leaveToProcessExit();
// Frees `graph` now, or after leaveToProcessExit() keeps it, still reachable, until the
// process ends.
void release(std::unique_ptr<Graph> graph);

// `--dim NAME=N` options as a map; a malformed or repeated one is a usage error.
std::map<std::string, int64_t> parseDimOptions(const std::vector<std::string>& specs);

}  // namespace gxc
