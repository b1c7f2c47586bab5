#include "tools/driver/run_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "frontend/npy.h"
#include "runtime/host_executor.h"
#include "runtime/param_init.h"
#include "tools/driver/tensor_format.h"

namespace gxc {
namespace {

std::map<std::string, Tensor> bindInputs(const Graph& graph,
                                         const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      usageError("--input {}: expected NAME=FILE.npy", spec);
    std::string name = spec.substr(0, eq);
    bool known = std::any_of(graph.inputs().begin(), graph.inputs().end(),
                             [&](const Value* input) { return input->name == name; });
    if (!known) {
      std::vector<std::string> names;
      for (const Value* input : graph.inputs()) names.push_back(input->name);
      usageError("--input {}: the model has no input '{}' (inputs: {})", spec, name,
                 fmt::join(names, ", "));
    }
    if (!files.emplace(name, spec.substr(eq + 1)).second)
      usageError("--input {}: input '{}' is given twice", spec, name);
  }
  std::map<std::string, Tensor> tensors;
  int64_t seed = graph.attrs().getInt("seed", 0);
  for (const Value* input : graph.inputs()) {
    auto file = files.find(input->name);
    if (file == files.end()) {
      tensors[input->name] = defaultInput(graph, *input, seed);
      continue;
    }
    Tensor tensor = readNpy(file->second, input->type.dtype);
    if (tensor.dtype() != input->type.dtype || tensor.shape() != input->type.shape)
      throw Error(ErrorKind::Model, {file->second, 0, 0},
                  fmt::format("input '{}' is {}{} but the model declares {} ({}:{}:{})",
                              input->name, dtypeName(tensor.dtype()), shapeString(tensor.shape()),
                              input->type.withoutDevice(), input->loc.file, input->loc.line,
                              input->loc.col));
    tensors[input->name] = std::move(tensor);
  }
  return tensors;
}

std::string humanBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

// Writes every file to NAME.tmp first and renames only when all were written, so a failure
// leaves none of the outputs behind.
void writeAllOrNothing(const std::vector<std::pair<std::string, std::string>>& staged) {
  for (const auto& [tmp, final] : staged) {
    std::error_code ec;
    std::filesystem::rename(tmp, final, ec);
    if (ec) {
      for (const auto& pair : staged) std::filesystem::remove(pair.first, ec);
      runtimeError({}, "cannot write {}: {}", final, ec.message());
    }
  }
}

nlohmann::json reportJson(const RunOptions& options, const Graph& graph, const HostRunStats& stats,
                          const std::vector<double>& iterationMs,
                          const std::map<std::string, Tensor>& outputs) {
  nlohmann::json report;
  report["model"] = options.compile.modelPath;
  report["graph"] = graph.name();
  // One device in this build; the copy counters are there so reports keep one shape when
  // multi-device runs fill them.
  report["devices"] = nlohmann::json::array({{{"device", "cpu"},
                                              {"time_ms", stats.milliseconds},
                                              {"peak_allocated_bytes", stats.peakBytes},
                                              {"peak_reserved_bytes", stats.peakBytes},
                                              {"bytes_copied_in", 0},
                                              {"bytes_copied_out", 0},
                                              {"copies", 0}}});
  for (const auto& [name, tensor] : outputs)
    report["outputs"][name] = {{"dtype", dtypeName(tensor.dtype())}, {"shape", tensor.shape()}};
  if (!iterationMs.empty()) {
    std::vector<double> sorted = iterationMs;
    std::sort(sorted.begin(), sorted.end());
    report["iteration_ms"] = {
        {"p50", sorted[sorted.size() / 2]}, {"min", sorted.front()}, {"iterations", sorted.size()}};
  }
  return report;
}

}  // namespace

int runModel(const RunOptions& options, std::ostream& out, std::ostream& err) {
  CompiledModel compiled = compileModel(options.compile, err);
  const Graph& graph = *compiled.graph;
  std::map<std::string, Tensor> inputs = bindInputs(graph, options.inputs);
  HostExecutor executor(graph, HostKernels::Cpu);
  HostRunStats stats;
  std::map<std::string, Tensor> outputs = executor.run(inputs, &stats);
  std::vector<double> iterationMs;
  for (int i = 0; i < options.iterations; ++i) {  // the run above was the warm-up
    outputs = executor.run(inputs, &stats);
    iterationMs.push_back(stats.milliseconds);
  }

  std::vector<std::pair<std::string, std::string>> staged;
  if (!options.outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.outputDir, ec);
    if (ec) runtimeError({}, "--output {}: {}", options.outputDir, ec.message());
    for (const auto& [name, tensor] : outputs) {
      std::string path = (std::filesystem::path(options.outputDir) / (name + ".npy")).string();
      writeNpy(path + ".partial", tensor);
      staged.emplace_back(path + ".partial", path);
    }
  }
  if (!options.reportPath.empty()) {
    std::string tmp = options.reportPath + ".partial";
    std::ofstream file(tmp);
    file << reportJson(options, graph, stats, iterationMs, outputs).dump(2) << "\n";
    if (!file.flush()) runtimeError({}, "--report: cannot write {}", options.reportPath);
    staged.emplace_back(tmp, options.reportPath);
  }
  writeAllOrNothing(staged);

  for (const GraphOutput& output : graph.outputs()) {
    const Tensor& tensor = outputs.at(output.name);
    out << output.name << ": " << dtypeName(tensor.dtype()) << shapeString(tensor.shape()) << "\n"
        << formatTensor(tensor) << "\n";
  }
  err << fmt::format("gxc: ran {} on cpu\n", options.compile.modelPath);
  err << fmt::format("  {:<8}{:>12}{:>16}{:>16}{:>12}{:>12}{:>8}\n", "device", "time", "peak alloc",
                     "peak reserved", "copied in", "copied out", "copies");
  err << fmt::format("  {:<8}{:>12}{:>16}{:>16}{:>12}{:>12}{:>8}\n", "cpu",
                     fmt::format("{:.3f} ms", stats.milliseconds), humanBytes(stats.peakBytes),
                     humanBytes(stats.peakBytes), "0 B", "0 B", 0);
  if (!iterationMs.empty()) {
    std::vector<double> sorted = iterationMs;
    std::sort(sorted.begin(), sorted.end());
    err << fmt::format("  {} iterations: p50 {:.3f} ms, min {:.3f} ms\n", sorted.size(),
                       sorted[sorted.size() / 2], sorted.front());
  }
  return 0;
}

}  // namespace gxc
