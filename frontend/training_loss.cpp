#include "frontend/training_loss.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ir/did_you_mean.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

constexpr std::array<std::string_view, 6> kLosses = {
    "mse_loss", "l1_loss",      "smooth_l1_loss", "binary_cross_entropy_with_logits",
    "nll_loss", "cross_entropy"};

bool takesClassIndices(OpKind kind) {
  return kind == OpKind::CrossEntropy || kind == OpKind::NllLoss;
}

// The target torch's loss takes beside `output`.
TensorType targetType(OpKind kind, const TensorType& output) {
  if (!takesClassIndices(kind)) return TensorType::of(output.dtype, output.shape);
  Shape shape = output.shape;
  shape.erase(shape.begin() + 1);  // [N, C, d1, ...] -> [N, d1, ...]
  return TensorType::of(DType::I64, shape);
}

}  // namespace

void addTrainingLoss(Graph& graph, const TrainingLoss& spec) {
  std::string named = graph.attrs().getString("train_loss", "");
  if (!named.empty())
    usageError(
        "--loss {}: the model's train: section names its loss already ('{}'); --loss is "
        "for a model without one",
        spec.loss, named);
  std::optional<OpKind> kind = parseOpKind(spec.loss);
  if (!kind || std::find(kLosses.begin(), kLosses.end(), spec.loss) == kLosses.end())
    usageError("--loss {}: not a loss{} (one of {})", spec.loss, didYouMean(spec.loss, kLosses),
               fmt::join(kLosses, ", "));
  if (spec.target.empty())
    usageError(
        "--loss {} needs --target NAME: the data file's array it compares the model's "
        "output with",
        spec.loss);
  if (graph.find(spec.target))
    usageError(
        "--target {}: the model has a value of that name already; name the data file's "
        "array otherwise",
        spec.target);
  // Every model has an output: its reader refuses one without.
  GXC_CHECK(!graph.outputs().empty(), "model '{}' has no output", graph.name());
  const GraphOutput& first = graph.outputs().front();
  const TensorType& output = first.value->type;
  if (!isFloat(output.dtype))
    usageError("--loss {}: the model's first output '{}' is {}, not a float", spec.loss, first.name,
               dtypeName(output.dtype));
  if (takesClassIndices(*kind) && output.rank() < 2)
    usageError(
        "--loss {}: the model's first output '{}' has shape [{}]; {} takes scores "
        "[N, C, ...]",
        spec.loss, first.name, fmt::join(output.shape, ", "), spec.loss);
  // Where messages about them point: the command line that made them.
  Value* target = graph.addInput(spec.target, targetType(*kind, output),
                                 SourceLoc(fmt::format("the target of --loss {}", spec.loss)));
  std::string name = graph.uniqueName("loss");
  Op* op = graph.appendOp(*kind, {first.value, target}, name, output, {},
                          SourceLoc(fmt::format("--loss {}", spec.loss)));
  op->result->type = inferResultType(*op);
  graph.attrs().set("train_loss", name);
}

}  // namespace gxc
