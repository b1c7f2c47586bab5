#include "tools/driver/executable.h"

#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/printer.h"
#include "runtime/host/host_threads.h"
#include "runtime/param_init.h"
#include "tools/driver/plan_printer.h"
#include "tools/driver/run_command.h"
#include "tools/driver/run_summary.h"

namespace gxc {

// One binding of the model's symbolic dimensions, compiled, with its executor.
struct Executable::Binding {
  CompileOptions options;  // what compiled it: the run's, with the shapes that bound its dims
  std::vector<std::pair<std::string, std::string>> renamedInputs;
  std::vector<std::string> devices;
  // The values of the inputs a run leaves out, those of `gxc run` without a file: made at the
  // first run that leaves one out, from the seed and the bounds the model had as loaded.
  std::map<std::string, Tensor> defaultInputs;
  int64_t seed = 0;
  std::map<std::string, int64_t> defaultInputBounds;
  std::unique_ptr<StepProgram> program;
};

namespace {

// The notes a compile writes, one line each.
std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// The model's name for an input the caller gave under its ONNX name.
std::string gxcNameOf(const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& renamed) {
  for (const auto& [onnxName, gxcName] : renamed)
    if (onnxName == name) return gxcName;
  return name;
}

// The name a caller gives `input` by: its ONNX name where gxc renamed it.
std::string callerNameOf(const Value& input,
                         const std::vector<std::pair<std::string, std::string>>& renamed) {
  for (const auto& [onnxName, gxcName] : renamed)
    if (gxcName == input.name) return onnxName;
  return input.name;
}

}  // namespace

Executable::Executable(CompileOptions options) : options_(std::move(options)) {
  std::unique_ptr<Binding> first = compile(nullptr);
  current_ = first.get();
  std::vector<Shape> shapes;
  for (const Value* input : current_->program->graph().inputs())
    shapes.push_back(input->type.shape);
  for (const GraphOutput& output : current_->program->graph().outputs())
    outputNames_.push_back(output.name);
  bindings_.emplace(std::move(shapes), std::move(first));
}

Executable::~Executable() = default;

std::unique_ptr<Executable::Binding> Executable::compile(const InputViews* shapesFrom) {
  auto binding = std::make_unique<Binding>();
  binding->options = options_;
  if (shapesFrom) {
    // Every input's shape binds the dims, as --input files would: the call's, and the current
    // binding's for the inputs the call leaves out. The sizes load() was given (--dim) were the
    // first binding's, and yield to the call's.
    auto given = [](const Shape& shape) {
      return GivenInput{"", [shape] { return shape; }, false, {}};
    };
    binding->options.dims.clear();
    for (const auto& [name, view] : *shapesFrom)
      binding->options.givenInputs[name] = given(view.shape());
    for (const Value* input : current_->program->graph().inputs()) {
      std::string callerName = callerNameOf(*input, current_->renamedInputs);
      if (!shapesFrom->count(callerName))
        binding->options.givenInputs[callerName] = given(input->type.shape);
    }
  }
  std::ostringstream said;
  CompiledModel compiled = compileModel(binding->options, CompileFor::Run, said);
  for (std::string& line : linesOf(said.str())) notes_.push_back(std::move(line));
  binding->renamedInputs = compiled.renamedInputs;
  for (const Device& device : compiled.devices.devices()) binding->devices.push_back(device.str());
  binding->seed = compiled.graph->attrs().getInt("seed", 0);
  binding->defaultInputBounds = compiled.defaultInputBounds;
  binding->program = std::make_unique<StepProgram>(std::move(compiled), nullptr);
  binding->program->setInterruptCheck(interrupted_);
  return binding;
}

Executable::Binding& Executable::bindingFor(const InputViews& inputs) {
  const Graph& graph = current_->program->graph();
  bool sameShapes = true;
  for (const auto& [name, view] : inputs) {
    std::string gxcName = gxcNameOf(name, current_->renamedInputs);
    const Value* input = nullptr;
    for (const Value* candidate : graph.inputs())
      if (candidate->name == gxcName) input = candidate;
    if (!input) {
      std::vector<std::string> names;
      for (const Value* candidate : graph.inputs()) names.push_back(candidate->name);
      usageError("input '{}': the model has no input '{}' (inputs: {})", name, name,
                 fmt::join(names, ", "));
    }
    if (view.shape() != input->type.shape) sameShapes = false;
  }
  // A model without symbolic dimensions has one binding: the check of each input says what
  // differs.
  if (sameShapes || !graph.attrs().has("dims")) return *current_;
  // Keyed by every input's shape, in the graph's order: the call's, else the current one's.
  std::vector<Shape> key;
  for (const Value* input : graph.inputs()) {
    std::string callerName = callerNameOf(*input, current_->renamedInputs);
    auto given = inputs.find(callerName);
    key.push_back(given == inputs.end() ? input->type.shape : given->second.shape());
  }
  auto found = bindings_.find(key);
  if (found == bindings_.end()) found = bindings_.emplace(key, compile(&inputs)).first;
  current_ = found->second.get();
  return *current_;
}

std::map<std::string, Tensor> Executable::run(const InputViews& inputs) {
  std::lock_guard lock(running_);
  Binding& binding = bindingFor(inputs);
  const Graph& graph = binding.program->graph();
  InputViews bound;
  for (const auto& [name, view] : inputs) {
    const Value* input = graph.find(gxcNameOf(name, binding.renamedInputs));
    checkGivenInput(*input, name, view.dtype(), view.shape(), {});
    bound.emplace(input->name, view);
  }
  for (const Value* input : graph.inputs()) {
    if (bound.count(input->name)) continue;
    auto [made, fresh] = binding.defaultInputs.try_emplace(input->name);
    if (fresh) {
      auto limit = binding.defaultInputBounds.find(input->name);
      made->second = defaultInput(*input, binding.seed,
                                  limit == binding.defaultInputBounds.end() ? 0 : limit->second);
    }
    bound.emplace(input->name, made->second.view());
  }
  OnFirstOpenMpCore master;
  std::map<std::string, Tensor> outputs = binding.program->run(bound, &last_);
  lastOutputs_ = nlohmann::json::object();
  for (const auto& [name, tensor] : outputs)
    lastOutputs_[name] = {{"dtype", dtypeName(tensor.dtype())}, {"shape", tensor.shape()}};
  return outputs;
}

void Executable::setInterruptCheck(std::function<bool()> interrupted) {
  std::lock_guard lock(running_);
  interrupted_ = std::move(interrupted);
  for (auto& [shapes, binding] : bindings_) binding->program->setInterruptCheck(interrupted_);
}

const Graph& Executable::graph() const { return current_->program->graph(); }

std::vector<std::string> Executable::devices() const { return current_->devices; }

std::string Executable::recompileSaying(const std::function<void(CompileOptions&)>& ask) const {
  CompileOptions options = current_->options;
  ask(options);
  std::ostringstream said;
  CompiledModel compiled = compileModel(options, CompileFor::Emit, said);
  return said.str();
}

std::string Executable::ir(const std::string& after) const {
  if (after.empty() || after == "final") return printGraph(graph());
  std::ostringstream printed;
  recompileSaying([&](CompileOptions& options) {
    options.passes.printIrAfter = after;
    options.passes.irStream = &printed;
  });
  std::string text = printed.str();
  if (after == "all") return text;
  size_t header = text.find('\n');
  if (text.empty() || header == std::string::npos)
    usageError("ir(after='{}'): the pass '{}' does not run for this model and placement", after,
               after);
  return text.substr(header + 1);
}

std::vector<std::string> Executable::explain() const {
  std::string said = recompileSaying([](CompileOptions& options) { options.explain = true; });
  std::vector<std::string> lines;
  const std::string prefix = "gxc: explain: ";
  for (std::string& line : linesOf(said))
    if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
  return lines;
}

std::string Executable::plan() const { return printExecutablePlan(graph()); }

nlohmann::json Executable::report() const {
  std::lock_guard lock(running_);
  if (lastOutputs_.is_null()) usageError("report(): the executable has not run yet; call it first");
  nlohmann::json report = summaryJson(last_.summary);
  report["model"] = options_.modelPath;
  report["graph"] = graph().name();
  report["outputs"] = lastOutputs_;
  return report;
}

std::string Executable::trace() const {
  std::lock_guard lock(running_);
  if (lastOutputs_.is_null()) usageError("trace(): the executable has not run yet; call it first");
  if (current_->devices.size() == 1 && current_->devices.front() == "cpu")
    usageError("trace(): the host platform records no trace; run on GPUs (sim_gpus=N)");
  if (last_.trace.empty())
    usageError("trace(): real GPUs record no trace yet; sim_gpus=N traces the same plan");
  return last_.trace;
}

}  // namespace gxc
