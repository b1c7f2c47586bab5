#include "tools/driver/gxc_cli.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "codegen/cuda_source.h"
#include "ir/dot_printer.h"
#include "ir/printer.h"
#include "runtime/cuda/gpu_devices.h"
#include "runtime/host/host_threads.h"
#include "target/byte_size.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/error_handling.h"
#include "tools/driver/gpu_code.h"
#include "tools/driver/import_command.h"
#include "tools/driver/plan_printer.h"
#include "tools/driver/run_command.h"
#include "tools/driver/terminal_progress.h"
#include "tools/driver/train_command.h"
#include "tools/driver/unknown_options.h"
#include "tools/driver/version.h"

namespace gxc {
namespace {

void addCompileOptions(CLI::App& command, CompileOptions& options) {
  command.add_option("model", options.modelPath, "the model file (YAML)")->required();
  command.add_option("--devices", options.devices, "cpu, or GPU indices 0,1,...");
  command.add_option("--sim-gpus", options.simGpus, "N[:MEM] virtual GPUs (MEM default 80GiB)");
  command.add_flag("--strict", options.strict, "refuse device edges the model did not ask for");
  command.add_option("--placement", options.placement, "manual | auto | data-parallel | pipeline");
  command.add_option("--microbatches", options.microbatches,
                     "M: pipeline placement splits the batch into M micro-batches (default: the "
                     "number of devices)");
  command.add_flag("--explain", options.explain, "the device chosen for every layer, and why");
  command.add_option("--weights", options.weightsPath, "safetensors file; overrides weights:");
  command.add_flag("--weights-partial", options.weightsPartial,
                   "params the weights file lacks are made from their init");
  command.add_option("--dim", options.dims,
                     "NAME=N: size of a symbolic dimension (repeatable; overrides dims:)");
  command.add_option("--print-ir-after", options.passes.printIrAfter, "PASS or all (to stderr)");
  command.add_option("--dump-ir", options.passes.dumpIrDir, "write DIR/NN-PASS.gxir after passes");
  command.add_flag("--time-passes", options.passes.timePasses, "per-pass wall times on stderr");
  command.add_option("--arch", options.arch, "sm_XX: GPU architecture for generated code");
}

int compileCommand(const CompileOptions& options, const std::string& emit,
                   const std::string& outPath, std::ostream& out, std::ostream& err) {
  bool gpuCode = emit == "cuda" || emit == "ptx";
  if (emit != "ir" && emit != "dot" && emit != "plan" && !gpuCode)
    usageError("--emit {}: expected ir, dot, cuda, ptx or plan", emit);
  std::optional<GpuArch> arch = parseArchOption(options.arch);
  // The CUDA C++ of --emit cuda is the same for every architecture: only PTX is built for one.
  if (arch && emit != "ptx")
    usageError(
        "--arch {}: only --emit ptx builds for an architecture (--emit cuda writes the same "
        "CUDA C++ for all)",
        options.arch);
  CompiledModel compiled = compileModel(options, CompileFor::Emit, err);
  std::string text;
  if (gpuCode)
    text = emitGpuCode(*compiled.graph, emit, arch.value_or(defaultGpuArch()));
  else if (emit == "plan")
    text = printExecutablePlan(*compiled.graph);
  else
    text = emit == "dot" ? printDot(*compiled.graph) : printGraph(*compiled.graph);
  release(std::move(compiled.graph));
  if (outPath.empty()) {
    out << text;
    return 0;
  }
  std::ofstream file(outPath + ".partial");
  file << text;
  if (!file.flush() || std::rename((outPath + ".partial").c_str(), outPath.c_str()) != 0)
    runtimeError({}, "-o: cannot write {}", outPath);
  return 0;
}

int devicesCommand(const std::string& simGpus, std::ostream& out) {
  // Checked before anything is printed: a bad option is one error line, not half a table.
  SimGpusOption sim;
  if (!simGpus.empty()) sim = parseSimGpusOption(simGpus);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  double gib = static_cast<double>(pages) * static_cast<double>(pageSize) / (1ull << 30);
  // `usable`: what a run may allocate there (a real GPU: free once gxc's context exists, less
  // cuBLASLt's workspace), the capacity plan-memory checks a plan against.
  std::string row = "{:<6} {:<24} {:>12} {:<18} {:>12}\n";
  out << fmt::format(fmt::runtime(row), "index", "name", "memory", "compute capability", "usable");
  out << fmt::format(fmt::runtime(row), "cpu", "host", fmt::format("{:.1f} GiB", gib), "-", "-");
  if (sim.enabled()) {
    for (int i = 0; i < sim.count; ++i)
      out << fmt::format(fmt::runtime(row), i, "sim H100 SXM", formatBytes(sim.memoryBytes), "9.0",
                         formatBytes(sim.memoryBytes));
    out << describeHostThreads() << "\n";
    return 0;
  }
  const GpuEnumeration& found = enumerateGpus();
  if (found.gpus.empty())
    out << "no GPU found (" << found.whyNone
        << "); --sim-gpus N gives N virtual GPUs (gxc devices --sim-gpus N lists them)\n";
  for (const GpuDeviceInfo& gpu : found.gpus)
    out << fmt::format(fmt::runtime(row), gpu.index, gpu.name, formatBytes(gpu.memoryBytes),
                       fmt::format("{}.{}", gpu.major, gpu.minor),
                       formatBytes(usableGpuMemory(gpu.index)));
  out << describeHostThreads() << "\n";
  return 0;
}

// --bucket-mb: a positive size, for the one placement that sends gradients in buckets.
int64_t bucketBytesOption(const std::string& placement, double megabytes) {
  if (placement != "data-parallel")
    usageError(
        "--bucket-mb: only data-parallel training sends gradients in buckets; add "
        "--placement data-parallel");
  if (!(megabytes > 0) || !std::isfinite(megabytes) || megabytes > 1e12)
    usageError("--bucket-mb {}: expected a size in MB above 0", megabytes);
  return std::max<int64_t>(1, static_cast<int64_t>(megabytes * 1024 * 1024));
}

}  // namespace

int gxcMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool errIsTerminal) {
  return reportErrors("gxc", err, [&]() -> int {
    // Destroyed (its line cleared) before an error is printed.
    TerminalProgress progress(err, errIsTerminal, errIsTerminal ? stderrColumns() : 80);
    progress.startRedrawThread();
    ScopedProgressSink installed(&progress);
    CLI::App app("gxc: compiles a model graph for a set of devices and runs it", "gxc");
    app.set_version_flag("--version", "gxc " + versionString(), "print gxc's version and exit");
    app.require_subcommand(1);
    RunOptions run;
    CLI::App* runCommand = app.add_subcommand("run", "compile, then execute");
    addCompileOptions(*runCommand, run.compile);
    runCommand->add_option("--input", run.inputs, "NAME=FILE.npy (repeatable)");
    runCommand->add_option("--output", run.outputDir, "write every output as DIR/NAME.npy");
    runCommand->add_option("--iterations", run.iterations, "timed runs after one warm-up")
        ->check(CLI::Range(1, 1000000000));
    runCommand->add_option("--report", run.reportPath, "run summary as JSON");
    runCommand->add_option("--trace", run.tracePath, "Chrome trace of every stream (JSON)");
    runCommand->add_flag("--emulate-gpu-blocks", run.emulateGpuBlocks,
                         "run each generated kernel's GPU launch, every thread (cpu, sim)");

    CompileOptions compile;
    std::string emit = "ir", outPath;
    CLI::App* compileCommandApp = app.add_subcommand("compile", "compile only");
    addCompileOptions(*compileCommandApp, compile);
    compileCommandApp->add_option("--emit", emit, "ir | dot | cuda | ptx | plan");
    compileCommandApp->add_option("-o", outPath, "where --emit writes (stdout if absent)");

    TrainOptions train;
    CLI::App* trainCommand = app.add_subcommand("train", "train the model's params on a data file");
    addCompileOptions(*trainCommand, train.compile);
    trainCommand->add_option("--data", train.dataPath, "the training set (.npz)")->required();
    trainCommand->add_option("--val", train.valPath, "a validation set (.npz), after every epoch");
    trainCommand->add_option("--epochs", train.epochs, "epochs (overrides train:)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    trainCommand->add_option("--steps", train.steps, "stop after N updates")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    trainCommand->add_option("--batch-size", train.batchSize, "samples per step")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    trainCommand->add_option("--lr", train.lr, "learning rate (overrides train:)");
    trainCommand->add_option("--optimizer", train.optimizer, "sgd | adam | adamw");
    trainCommand->add_option("--autocast", train.autocast,
                             "bf16: matmuls and convolutions in bf16, f32 master weights");
    trainCommand->add_option("--loss", train.addedLoss.loss,
                             "a loss over the first output, for a model without train: "
                             "(cross_entropy, mse_loss, ...)");
    trainCommand->add_option("--target", train.addedLoss.target,
                             "NAME: the data file's array --loss compares with");
    trainCommand->add_flag("--no-shuffle", train.noShuffle, "keep the data file's order");
    trainCommand->add_option("--save", train.savePath, "the trained params (.safetensors)");
    trainCommand->add_option("--checkpoint", train.checkpointDir,
                             "DIR: the whole training state after every epoch");
    trainCommand->add_option("--resume", train.resumePath, "go on from a --checkpoint file");
    trainCommand->add_option("--log", train.logPath, "one JSON line per step");
    trainCommand->add_option("--tensorboard", train.tensorboardDir,
                             "DIR: TensorBoard event files of the same scalars");
    trainCommand->add_option("--report", train.reportPath, "the last step's summary as JSON");
    trainCommand->add_option("--trace", train.tracePath,
                             "Chrome trace of the last step's streams (JSON)");
    double bucketMb = 25;
    trainCommand->add_option("--bucket-mb", bucketMb,
                             "MB: data-parallel gradient buckets, at most this size (25)");
    ImportOptions import;
    CLI::App* importApp = app.add_subcommand("import", "an ONNX model as gxc YAML");
    importApp->add_option("model", import.modelPath, "the ONNX model (.onnx)")->required();
    importApp->add_option("-o", import.outPath, "OUT.yaml; the weights go to OUT.safetensors")
        ->required();
    importApp->add_option("--dim", import.dims,
                          "NAME=N: fixes a dynamic axis to N in the written model (repeatable)");

    std::string simGpus;
    CLI::App* devices = app.add_subcommand("devices", "list devices");
    devices->add_option("--sim-gpus", simGpus, "N[:MEM] virtual GPUs");

    try {
      app.parse(argc, argv);
    } catch (const CLI::ExtrasError&) {
      refuseUnknownOption(app, {argv + 1, static_cast<size_t>(argc - 1)});
      throw;
    } catch (const CLI::RequiredError&) {  // "A subcommand is required": was one misspelt?
      refuseUnknownOption(app, {argv + 1, static_cast<size_t>(argc - 1)});
      throw;
    } catch (const CLI::CallForHelp&) {
      out << app.help();
      return 0;
    } catch (const CLI::CallForVersion& version) {
      out << version.what() << "\n";
      return 0;
    }
    if (trainCommand->parsed()) {
      checkPlacementOptions(train.compile, trainCommand->count("--microbatches") > 0);
      if (trainCommand->count("--bucket-mb") > 0)
        train.compile.bucketBytes = bucketBytesOption(train.compile.placement, bucketMb);
      return trainModel(train, out, err);
    }
    if (importApp->parsed()) return importCommand(import, out, err);
    if (runCommand->parsed()) {
      checkPlacementOptions(run.compile, runCommand->count("--microbatches") > 0);
      return runModel(run, out, err);
    }
    if (compileCommandApp->parsed()) {
      checkPlacementOptions(compile, compileCommandApp->count("--microbatches") > 0);
      return compileCommand(compile, emit, outPath, out, err);
    }
    return devicesCommand(simGpus, out);
  });
}

}  // namespace gxc
