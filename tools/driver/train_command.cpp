#include "tools/driver/train_command.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "frontend/model_loader.h"
#include "frontend/onnx_import.h"
#include "frontend/training_loss.h"
#include "ir/progress.h"
#include "runtime/host/host_threads.h"
#include "tensor/safetensors.h"
#include "tools/driver/error_handling.h"
#include "tools/driver/output_paths.h"
#include "tools/driver/run_command.h"
#include "tools/driver/staged_files.h"
#include "tools/driver/train_checkpoint.h"
#include "tools/driver/train_data.h"
#include "tools/driver/train_records.h"
#include "tools/driver/train_schedule.h"
#include "tools/driver/train_step.h"
#include "tools/driver/train_validation.h"

namespace gxc {
namespace {

// What the model's train: section says, with the command line's overrides.
struct TrainSettings {
  std::string loss;
  int64_t batchSize = 0;
  int64_t epochs = 1;
  std::optional<int64_t> steps;
  bool shuffle = true;
  bool dropLast = false;
  int64_t seed = 0;
  double lr = 0;           // the optimizer's, which a schedule scales
  int64_t accumulate = 1;  // micro-batches per optimizer step
  std::optional<LrSchedule> schedule;
};

TrainSettings readSettings(const Graph& model, const TrainOptions& options) {
  const Attrs& attrs = model.attrs();
  TrainSettings settings;
  settings.loss = attrs.getString("train_loss", "");
  if (settings.loss.empty())
    throw Error(ErrorKind::Model, {options.compile.modelPath, 0, 0},
                "the model has no train: section naming its loss (train: {loss: LAYER, ...}; "
                "docs/model-format.md, Training); or give one: --loss cross_entropy --target "
                "NAME");
  if (!attrs.has("optimizer") && options.optimizer.empty())
    usageError(
        "the model's train: section names no optimizer; give one (--optimizer sgd|adam|"
        "adamw)");
  if (!attrs.has("lr") && !options.lr)
    usageError("the model's train: section gives no lr; give one (--lr LR)");
  settings.batchSize = options.batchSize.value_or(attrs.getInt("train_batch_size", 0));
  if (settings.batchSize <= 0)
    usageError("the model's train: section gives no batch_size; give one (--batch-size B)");
  settings.epochs = options.epochs.value_or(attrs.getInt("train_epochs", 1));
  settings.steps = options.steps;
  settings.shuffle = !options.noShuffle && attrs.getBool("train_shuffle", true);
  settings.dropLast = attrs.getBool("train_drop_last", false);
  settings.seed = attrs.getInt("seed", 0);
  settings.lr = options.lr.value_or(attrs.getFloat("lr", 0));
  settings.accumulate = attrs.getInt("accumulate", 1);
  settings.schedule = LrSchedule::fromAttrs(attrs, options.compile.modelPath);
  if (settings.schedule && settings.schedule->setsItsOwnLr() && options.lr)
    usageError("--lr {}: the model's one_cycle_lr schedule sets the lr (its max_lr)", *options.lr);
  return settings;
}

void checkTrainOptions(const TrainOptions& options) {
  if (!options.autocast.empty() && options.autocast != "bf16")
    usageError("--autocast {}: not supported (bf16 is: matmuls and convolutions in bf16)",
               options.autocast);
  if (options.addedLoss.loss.empty() && !options.addedLoss.target.empty())
    usageError("--target {}: it names the array --loss compares with; give --loss too",
               options.addedLoss.target);
  if (!options.addedLoss.loss.empty() && options.addedLoss.target.empty())
    usageError(
        "--loss {} needs --target NAME: the data file's array it compares the model's "
        "output with",
        options.addedLoss.loss);
  if (!options.compile.arch.empty())
    usageError("--arch {}: gxc train takes none; on real GPUs it builds for the run's oldest GPU",
               options.compile.arch);
  if (options.lr && (!std::isfinite(*options.lr) || *options.lr < 0))
    usageError("--lr {}: expected a finite number >= 0", *options.lr);
  if (!options.optimizer.empty() && options.optimizer != "sgd" && options.optimizer != "adam" &&
      options.optimizer != "adamw")
    usageError("--optimizer {}: expected sgd, adam or adamw", options.optimizer);
  // Every path written during or after training, checked before it: a mistake there would
  // otherwise be found when the trained params are lost.
  for (auto [option, path] : {std::pair{"--save", &options.savePath},
                              {"--report", &options.reportPath},
                              {"--trace", &options.tracePath},
                              {"--log", &options.logPath}})
    if (!path->empty()) checkOutputFileOption(option, *path);
  for (auto [option, dir] : {std::pair{"--checkpoint", &options.checkpointDir},
                             {"--tensorboard", &options.tensorboardDir}})
    if (!dir->empty()) checkOutputDirOption(option, *dir);
}

// The command line's overrides, applied to the loaded model before the passes.
void applyOverrides(Graph& model, const TrainOptions& options) {
  if (!options.optimizer.empty() &&
      options.optimizer != model.attrs().getString("optimizer", options.optimizer)) {
    // Another optimizer's hyperparameters do not carry over: torch's defaults of the new one.
    for (const char* key :
         {"momentum", "dampening", "nesterov", "weight_decay", "beta1", "beta2", "eps"})
      model.attrs().erase(key);
  }
  if (!options.optimizer.empty()) model.attrs().set("optimizer", options.optimizer);
  if (options.lr) model.attrs().set("lr", *options.lr);
  if (!options.autocast.empty()) model.attrs().set("autocast", options.autocast);
}

// --loss's layer over the model's first output, when the command line gives one.
void addLossIfAsked(Graph& model, const TrainOptions& options) {
  if (!options.addedLoss.loss.empty()) addTrainingLoss(model, options.addedLoss);
}

// Whether a data file's array is --target's: an input the model has only once --loss's layer
// is added, so its shape binds nothing when the model is read.
bool isAddedTarget(const std::string& array, const TrainOptions& options) {
  return !options.addedLoss.loss.empty() && array == options.addedLoss.target;
}

// The model as `gxc train` reads it to check the data against it: YAML or ONNX, with --loss's
// layer.
std::unique_ptr<Graph> loadForTraining(const TrainOptions& options,
                                       const ModelOptions& modelOptions) {
  const std::string& path = options.compile.modelPath;
  std::unique_ptr<Graph> model =
      isOnnxPath(path) ? importOnnx(path, modelOptions).graph : loadModel(path, modelOptions);
  addLossIfAsked(*model, options);
  return model;
}

double scalarLoss(const Tensor& loss) {
  return loss.dtype() == DType::F64 ? loadDoubleAt(DType::F64, loss.data(), 0)
                                    : loadFloatAt(loss.dtype(), loss.data(), 0);
}

// The trained params under their state_dict names: the model's own (frozen ones included),
// not what the compiler made for training.
std::map<std::string, Tensor> modelParams(const Graph& graph,
                                          const std::map<std::string, Tensor>& values) {
  std::map<std::string, Tensor> params;
  for (const Op* op : graph.ops()) {
    if (op->kind != OpKind::Param || op->attrs.has("role")) continue;
    std::string name = op->attrs.getString("name", op->result->name);
    auto value = values.find(name);
    if (value != values.end()) params.emplace(name, value->second);
  }
  return params;
}

// The forward for `rows` samples of the validation set: the default pipeline (no backward, no
// update) with the loss layer an output.
std::unique_ptr<StepProgram> compileForward(const TrainOptions& options, const TrainingData& val,
                                            int64_t rows) {
  CompileOptions compile = options.compile;
  compile.passes = {};  // what --print-ir-after and --dump-ir show is the training step
  compile.givenInputs.clear();
  for (const auto& [name, array] : val.arrays())
    if (!isAddedTarget(name, options))
      compile.givenInputs[name] = {
          val.path(), [&val, name = name, rows] { return val.batchShape(name, rows); }, true, {}};
  compile.beforePasses = [&options](Graph& model) {
    addLossIfAsked(model, options);
    outputTheLoss(model);
  };
  std::ostringstream repeated;  // the training step's compile said its notes
  CompiledModel compiled = compileModel(compile, CompileFor::Run, repeated);
  val.check(*compiled.graph);
  return std::make_unique<StepProgram>(std::move(compiled));
}

// --report and --trace: what the last step's run reported, both files or neither.
void writeLastStep(const TrainOptions& options, const StepRecord& last, const Graph& graph,
                   int64_t step, double loss) {
  StagedFiles staged;
  if (!options.reportPath.empty()) {
    nlohmann::json report = summaryJson(last.summary);
    report["model"] = options.compile.modelPath;
    report["graph"] = graph.name();
    report["step"] = step;
    report["loss"] = loss;
    staged.stage(options.reportPath, {report.dump(2) + "\n"}, "--report");
  }
  if (!options.tracePath.empty()) staged.stage(options.tracePath, {last.trace}, "--trace");
  staged.commit();
}

}  // namespace

int trainModel(const TrainOptions& options, std::ostream& out, std::ostream& err) {
  checkTrainOptions(options);
  TrainingData data(options.dataPath, "--data");
  std::optional<TrainingData> val;
  if (!options.valPath.empty()) val.emplace(options.valPath, "--val");

  // The train: section, read from the model as the whole data set binds it.
  ModelOptions modelOptions;
  modelOptions.weightsPath = options.compile.weightsPath;
  modelOptions.weightsPartial = options.compile.weightsPartial;
  modelOptions.dims = parseDimOptions(options.compile.dims);
  for (const auto& [name, array] : data.arrays())
    if (!isAddedTarget(name, options))
      modelOptions.givenInputs[name] = {
          data.path(), [shape = array.shape()] { return shape; }, true, {}};
  std::unique_ptr<Graph> model = loadForTraining(options, modelOptions);
  TrainSettings settings = readSettings(*model, options);
  int64_t batch = settings.batchSize;
  if (batch > data.samples() && settings.dropLast)
    throw Error(ErrorKind::Model, {data.path(), 0, 0},
                fmt::format("--data: {} samples make no batch of {} with drop_last", data.samples(),
                            batch));
  // Labels a loss would find out of range mid-training, found now with their row.
  data.checkClassTargets(*model);
  if (val) val->checkClassTargets(*model);
  std::optional<ClassifierScores> classifier = classifierScoresOf(*model);
  model.reset();
  int64_t wholeBatches = data.samples() / batch;
  int64_t rest = settings.dropLast ? 0 : data.samples() % batch;
  if (settings.schedule) {
    // The scheduler steps a torch loop would take: one_cycle_lr must cover them all.
    int64_t perEpoch = wholeBatches + (rest > 0 ? 1 : 0);
    int64_t batches = settings.epochs * perEpoch;
    if (settings.steps) batches = std::min(batches, *settings.steps * settings.accumulate);
    settings.schedule->checkLength(settings.schedule->perEpoch()
                                       ? (batches + perEpoch - 1) / perEpoch
                                       : batches / settings.accumulate);
  }

  // The inputs of a batch of `rows` samples, as the data binds the model's dims; what makes
  // that size is said when an input's fixed dim 0 differs.
  auto batchInputs = [&](int64_t rows) {
    std::string origin = rows == batch ? fmt::format("batch_size {}", batch)
                         : wholeBatches == 0
                             ? fmt::format("{} holds {} samples, fewer than batch_size {}",
                                           data.path(), data.samples(), batch)
                             : fmt::format(
                                   "the last batch of an epoch: {} samples of {}, batch_size {}; "
                                   "drop_last: true skips it",
                                   rows, data.samples(), batch);
    std::map<std::string, GivenInput> given;
    for (const auto& [name, array] : data.arrays())
      if (!isAddedTarget(name, options))
        given[name] = {data.path(),
                       [&data, name = name, rows] { return data.batchShape(name, rows); }, true,
                       origin};
    return given;
  };
  // Compiles the step for batches of `rows` samples.
  int compiles = 0;
  auto compileFor = [&](int64_t rows) {
    CompileOptions compile = options.compile;
    compile.givenInputs = batchInputs(rows);
    compile.beforePasses = [&options](Graph& model) {
      addLossIfAsked(model, options);
      applyOverrides(model, options);
    };
    // The notes of a compile (no GPU found, ...) are said once: the last batch's compile
    // would repeat them.
    std::ostringstream repeated;
    CompiledModel compiled = compileModel(compile, CompileFor::Train, compiles++ ? repeated : err);
    if (!options.tracePath.empty() && compiled.devices.hostOnly())
      usageError("--trace: the host platform records no trace; train on GPUs (--sim-gpus N)");
    if (!options.tracePath.empty() && !compiled.sim.enabled())
      usageError("--trace: real GPUs record no trace yet; --sim-gpus N traces the same plan");
    data.check(*compiled.graph);
    return std::make_unique<StepProgram>(std::move(compiled), &err);
  };
  // The last, smaller batch is compiled when an epoch reaches it; whether the model takes it
  // is known now, so that no training is lost to it (unless --steps stops before it).
  if (rest > 0 && wholeBatches > 0 && (!settings.steps || *settings.steps > wholeBatches)) {
    modelOptions.givenInputs = batchInputs(rest);
    loadForTraining(options, modelOptions);
  }
  TrainingSteps steps(compileFor, std::min(batch, data.samples()));
  // The validation set's forward, compiled now: a set the model cannot take is refused
  // before any step runs.
  std::optional<Validation> validation;
  if (val) {
    auto compile = [&](int64_t rows) { return compileForward(options, *val, rows); };
    validation.emplace(*val, compile, batch, settings.loss, classifier);
  }

  int64_t step = 0;
  int64_t firstEpoch = 0;
  if (!options.resumePath.empty()) {
    TrainCheckpoint resumed = readCheckpoint(options.resumePath, steps.current().paramValues());
    steps.current().setParamValues(resumed.params);
    firstEpoch = resumed.epochsDone;
    step = resumed.stepsDone;
  }
  // Accumulation: the micro-batches run since the last optimizer step (counted over the run, as
  // a torch loop that steps on every K-th micro-batch; a checkpoint ends an epoch), with their
  // summed loss, samples and time.
  const int64_t micro = settings.accumulate;
  int64_t pending = firstEpoch * (wholeBatches + (rest > 0 ? 1 : 0)) % micro;
  double lossSum = 0, seconds = 0;
  int64_t samples = 0, seen = 0;      // `seen`: of the pending ones, those this process ran
  std::optional<double> simulatedMs;  // of the pending micro-batches, on virtual GPUs
  StepRecords records(options.logPath, options.tensorboardDir);
  // --report and --trace describe the last step, as `gxc run` describes its run.
  bool recording = !options.reportPath.empty() || !options.tracePath.empty();
  StepRecord lastStep;
  double lastLoss = NAN;
  ValidationResult valResult{NAN, std::nullopt};
  bool done = settings.steps && step >= *settings.steps;
  OnFirstOpenMpCore master;
  for (int64_t epoch = firstEpoch; epoch < settings.epochs && !done; ++epoch) {
    std::vector<int64_t> order = epochOrder(data.samples(), settings.shuffle, settings.seed, epoch);
    int64_t batches = wholeBatches + (rest > 0 ? 1 : 0);
    ProgressTask progress(fmt::format("epoch {}/{}", epoch + 1, settings.epochs), batches);
    int64_t b = 0;
    for (; b < batches && !done; ++b) {
      int64_t begin = b * batch;
      int64_t rows = std::min(batch, data.samples() - begin);
      StepProgram& program = steps.forRows(rows);
      double lr = settings.lr;
      if (settings.schedule)
        lr = settings.schedule->at(settings.lr, settings.schedule->perEpoch() ? epoch : step);
      program.setStepScalars(settings.schedule ? std::optional(lr) : std::nullopt,
                             micro > 1 ? std::optional(pending + 1 == micro) : std::nullopt);
      auto start = std::chrono::steady_clock::now();
      std::map<std::string, Tensor> outputs = program.run(
          data.gather(std::vector<int64_t>(order.begin() + begin, order.begin() + begin + rows)),
          recording ? &lastStep : nullptr);
      double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      seconds += ran;
      if (std::optional<double> simulated = program.lastSimulatedMs())
        simulatedMs = simulatedMs.value_or(0) + *simulated;
      double loss = scalarLoss(outputs.at(settings.loss));
      if (!std::isfinite(loss))
        runtimeError({},
                     "the loss became {} at epoch {}, step {}: training stopped (a smaller "
                     "--lr often helps)",
                     loss, epoch + 1, step + 1);
      progress.describe(stepStatus(loss, rows, ran, program.lastSimulatedMs()));
      progress.advance();
      lossSum += loss;
      samples += rows;
      ++seen;
      if (++pending < micro) continue;
      // An optimizer step: its loss is the mean of its micro-batches' (sum of loss / K), of
      // those run since --resume where it went on from a checkpoint inside the K.
      ++step;
      lastLoss = lossSum / static_cast<double>(seen);
      records.step({epoch + 1, step, samples, lastLoss, lr, seconds, simulatedMs});
      pending = samples = seen = 0;
      lossSum = seconds = 0;
      simulatedMs.reset();
      done = settings.steps && step >= *settings.steps;
    }
    if (validation && b > 0) {
      valResult = validation->run(steps.current().paramValues());
      records.validation(epoch + 1, step, valResult);
    }
    records.endEpoch();
    // A checkpoint after every whole epoch: what --resume goes on from.
    if (!options.checkpointDir.empty() && b == batches)
      writeCheckpoint(options.checkpointDir, {steps.current().paramValues(), epoch + 1, step});
  }
  records.finish();
  writeLastStep(options, lastStep, steps.current().graph(), step, lastLoss);
  if (!options.savePath.empty()) {
    makeParentDirs("--save", options.savePath);
    writeSafetensors(options.savePath,
                     modelParams(steps.current().graph(), steps.current().paramValues()));
  }
  out << fmt::format("trained {} step{}; last loss {}", step, step == 1 ? "" : "s", lastLoss);
  if (validation) out << fmt::format("; validation loss {}", valResult.loss);
  if (valResult.accuracy) out << fmt::format(", accuracy {}", *valResult.accuracy);
  out << "\n";
  return 0;
}

}  // namespace gxc
