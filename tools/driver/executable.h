// A model compiled once and run as often as its caller likes, in the caller's process: what the
// Python module binds (python/src/module.cpp), with `gxc run`'s options, checks and messages.
//
// It compiles as `gxc run` does (compileModel, the same CompileOptions and defaults) and keeps
// the platform's executor (StepProgram) for every run, so params are materialized and kernels
// built once. A run takes its inputs as views of the caller's memory: the host reads them
// where they are; virtual and real GPUs copy them in, as they copy an --input file's tensor.
// An input the caller leaves out gets the values `gxc run` gives an input without a file. A
// model with symbolic dimensions is compiled again, once per binding, for inputs whose shapes
// bind them differently (as --input files bind them), and each binding keeps its executor.
//
// What the command line shows is here as values: the IR after a pass, the explanation of every
// layer's device, the executable plan, the --report JSON and the trace of the last run.
// Runs of one Executable from several threads take turns (a run, and the report of the last,
// hold its lock); two Executables share nothing and run at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/tensor.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/train_step.h"

namespace gxc {

class Executable {
 public:
  // Compiles now: the model's errors, and the options', come from here. Notes ("no GPU found")
  // are kept in notes().
  explicit Executable(CompileOptions options);
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Outputs by their model names. Inputs by the model's names (an ONNX model's own names too);
  // one the model lacks is a usage error, one of another dtype or shape a model error.
  std::map<std::string, Tensor> run(const InputViews& inputs);

  // Asked between the steps of a run on the host, which stops there (RunInterrupted) when it
  // says so; runs on GPUs, virtual or real, finish. Null: never.
  void setInterruptCheck(std::function<bool()> interrupted);

  // The graph of the binding that ran last (the first compiled, before any run).
  const Graph& graph() const;
  // The model's output names in its order, the same in every binding.
  const std::vector<std::string>& outputNames() const { return outputNames_; }
  // The devices the run places on: "cpu", or "cuda:0", "cuda:1", ... (virtual or real).
  std::vector<std::string> devices() const;
  // The notes the compiles said, one line each ("gxc: note: ...").
  const std::vector<std::string>& notes() const { return notes_; }
  // The IR after the pass named `after` ("" or "final": after the whole pipeline), as
  // --print-ir-after prints it; an unknown pass is a usage error.
  std::string ir(const std::string& after) const;
  // --explain's lines, without their "gxc: explain: " prefix.
  std::vector<std::string> explain() const;
  // `gxc compile --emit plan`.
  std::string plan() const;
  // The --report JSON of the last run (a usage error before any); `trace()`, its --trace
  // (a usage error on the host, which records none).
  nlohmann::json report() const;
  std::string trace() const;

 private:
  struct Binding;
  // The binding these inputs' shapes need: the current one, or one compiled for them.
  Binding& bindingFor(const InputViews& inputs);
  std::unique_ptr<Binding> compile(const InputViews* shapesFrom);
  // Compiles again with the current binding's dims, for what only a compile prints.
  std::string recompileSaying(const std::function<void(CompileOptions&)>& ask) const;

  CompileOptions options_;
  std::vector<std::string> notes_;
  std::vector<std::string> outputNames_;
  std::function<bool()> interrupted_;
  std::map<std::vector<Shape>, std::unique_ptr<Binding>> bindings_;  // by symbolic inputs' shapes
  Binding* current_ = nullptr;
  mutable std::mutex running_;  // held by run(), report() and trace()
  StepRecord last_;
  // Each output's dtype and shape, as --report lists them; null until a run has finished.
  nlohmann::json lastOutputs_;
};

}  // namespace gxc
