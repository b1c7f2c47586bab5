#include "tools/driver/train_validation.h"

#include <algorithm>
#include <numeric>

namespace gxc {

Validation::Validation(const TrainingData& data, Compile compile, int64_t batch, std::string loss)
    : data_(data), compile_(std::move(compile)), batch_(batch), loss_(std::move(loss)) {
  // Compiled now, so that a validation set the model cannot take is refused before training.
  int64_t first = std::min(batch_, data_.samples());
  programs_.emplace(first, compile_(first));
}

double Validation::loss(const std::map<std::string, Tensor>& params) {
  double weighted = 0;
  for (int64_t begin = 0; begin < data_.samples(); begin += batch_) {
    int64_t rows = std::min(batch_, data_.samples() - begin);
    auto found = programs_.find(rows);
    if (found == programs_.end()) found = programs_.emplace(rows, compile_(rows)).first;
    StepProgram& program = *found->second;
    program.setParamValues(params);
    std::vector<int64_t> samples(rows);
    std::iota(samples.begin(), samples.end(), begin);
    std::map<std::string, Tensor> outputs = program.run(data_.gather(samples));
    const Tensor& loss = outputs.at(loss_);
    weighted += loadDoubleAt(loss.dtype(), loss.data(), 0) * static_cast<double>(rows);
  }
  return weighted / static_cast<double>(data_.samples());
}

void outputTheLoss(Graph& model) {
  std::string name = model.attrs().getString("train_loss", "");
  Value* loss = model.find(name);
  if (!loss) return;  // the training compile refuses the model, naming the loss
  for (const GraphOutput& output : model.outputs())
    if (output.value == loss) return;
  model.addOutput(name, loss);
}

}  // namespace gxc
