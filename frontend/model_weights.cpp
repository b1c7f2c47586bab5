// The weights file: opened once per model, each param loaded from the tensor of its name, and
// the file and the params checked against each other as PyTorch's
// load_state_dict(strict=True) checks a state_dict against a module.
#include <filesystem>
#include <map>

#include <fmt/ranges.h>

#include "frontend/model_builder.h"

namespace gxc {
namespace {

// The prefix that the file's names have and the model's lack, when stripping it would match
// some missing param ("module." of DistributedDataParallel, "model." of Lightning): the
// prefix most of them agree on, or empty.
std::string extraPrefix(const std::vector<std::string>& missing,
                        const std::vector<std::string>& unused) {
  std::map<std::string, int> votes;
  for (const std::string& param : missing)
    for (const std::string& stored : unused)
      if (stored.size() > param.size() &&
          stored.compare(stored.size() - param.size(), param.size(), param) == 0) {
        std::string prefix = stored.substr(0, stored.size() - param.size());
        if (prefix.back() == '.') ++votes[prefix];
      }
  std::string best;
  int most = 0;
  for (const auto& [prefix, count] : votes)
    if (count > most) best = prefix, most = count;
  return best;
}

std::string stripPrefixHint(const std::string& prefix) {
  if (prefix.empty()) return "";
  return fmt::format(
      "; the file's names start with '{0}', which the model's do not: save the state_dict "
      "without it (torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state_dict, "
      "'{0}'))",
      prefix);
}

}  // namespace

Value* ModelBuilder::addParam(const std::string& name, TensorType type, std::optional<Attrs> init,
                              const SourceLoc& loc, bool initWritten) {
  Attrs attrs;
  if (weights_ && weights_->contains(name)) {
    const SafetensorsEntry& stored = weights_->entries().at(name);
    TensorType storedType = TensorType::of(stored.dtype, stored.shape);
    if (storedType.withoutDevice() != type.withoutDevice())
      modelError(loc, "param '{}': the weights file {} has {}, the model expects {}", name,
                 weights_->path(), storedType.withoutDevice(), type.withoutDevice());
    attrs.set("init", "file");
    attrs.set("file", weights_->path());
    loadedFromWeights_.insert(name);
  } else if (init) {
    attrs = *init;
    if (weights_ && !initWritten) missingFromWeights_.push_back(name);
  } else {
    modelError(loc, "param '{}' has no init{}", name,
               weights_ ? fmt::format(" and the weights file {} does not hold it", weights_->path())
                        : std::string(" and the model names no weights file"));
  }
  attrs.set("name", name);
  attrs.set("seed", seed_);
  return graph_->appendOp(OpKind::Param, {}, name, type, attrs, loc)->result;
}

void ModelBuilder::openWeights(const YamlNode& root) {
  if (inMemoryWeights_) {
    weights_ = inMemoryWeights_;
    graph_->attachParamData(weights_->path(), weights_);  // what the params read at run time
    return;
  }
  if (!weightsOverride_.empty()) {
    weights_ = std::make_shared<SafetensorsFile>(SafetensorsFile::open(weightsOverride_));
    return;
  }
  YamlNode node = root["weights"];
  if (!node) return;
  std::filesystem::path path = reader_.scalar(node, "weights");
  if (path.is_relative() && !baseDir_.empty()) path = std::filesystem::path(baseDir_) / path;
  try {
    weights_ = std::make_shared<SafetensorsFile>(SafetensorsFile::open(path.string()));
  } catch (const Error& error) {
    reader_.fail(node, "weights file {}: {}", path.string(), error.message());
  }
}

void ModelBuilder::checkWeightsMatchParams(const YamlNode& root) const {
  if (!weights_) return;
  std::vector<std::string> unused;
  for (const auto& [name, entry] : weights_->entries())
    if (!loadedFromWeights_.count(name)) unused.push_back(name);
  // PyTorch's load_state_dict(strict=True) refuses both: a missing param would keep its random
  // init while the run looks loaded; an unexpected tensor is most often a typo, whose param then
  // runs with the wrong weights. One message names both, as torch's does.
  const bool missing = !missingFromWeights_.empty() && !weightsPartial_;
  if (!missing && unused.empty()) return;
  std::string message = fmt::format("the weights file {}", weights_->path());
  if (missing)
    message += fmt::format(
        " lacks params {} (they would keep a random init; --weights-partial makes them from "
        "their init)",
        fmt::join(missingFromWeights_, ", "));
  if (missing && !unused.empty()) message += " and";
  if (!unused.empty())
    message += fmt::format(" holds tensors no param is named: {}", fmt::join(unused, ", "));
  message += stripPrefixHint(extraPrefix(missingFromWeights_, unused));
  if (root["weights"] && weightsOverride_.empty() && !inMemoryWeights_)
    reader_.fail(root["weights"], "{}", message);
  throw Error(ErrorKind::Model, {weights_->path(), 0, 0}, message);
}

}  // namespace gxc
