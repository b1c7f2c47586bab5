// Inputs, params, their tensor specs and inits, and devices.
#include <algorithm>

#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/did_you_mean.h"

namespace gxc {

// `what` names the owner of the device: "layer 'h'", "input 'x'", "default_device".
Device ModelBuilder::device(const YamlNode& node, std::string_view what) const {
  std::string text = reader_.scalar(node, fmt::format("the device of {}", what));
  auto parsed = parseDevice(text);
  if (!parsed) reader_.fail(node, "{}: unknown device '{}' (cpu, cuda or cuda:N)", what, text);
  return *parsed;
}

TensorType ModelBuilder::tensorSpec(const YamlNode& spec, std::string_view what, YamlNode* initOut,
                                    DeclaredInput* declared) const {
  reader_.requireMap(spec, what);
  if (declared)
    reader_.checkKeys(spec, {"shape", "dtype", "device"}, what);
  else
    reader_.checkKeys(spec, {"shape", "dtype", "init", "device"}, what);
  YamlNode shapeNode = reader_.required(spec, "shape", what);
  reader_.requireSequence(shapeNode, fmt::format("the shape of {}", what));
  TensorType type = TensorType::of(DType::F32, {});
  for (const YamlNode& dim : shapeNode) {
    // A symbolic dimension (format 1.1) is a name; only inputs have them.
    if (dim.isScalar() && isDimName(dim.scalar())) {
      if (!declared)
        reader_.fail(dim,
                     "{}: dimension '{}' is a name, but params never have symbolic shapes (their "
                     "sizes are fixed by the model)",
                     what, dim.scalar());
      declared->dims.push_back({0, dim.scalar(), reader_.loc(dim)});
      continue;
    }
    int64_t size = reader_.integer(dim, fmt::format("a dimension of {}", what));
    if (size <= 0) reader_.fail(dim, "{}: dimension {} must be positive", what, size);
    type.shape.push_back(size);
    if (declared) declared->dims.push_back({size, "", reader_.loc(dim)});
  }
  if (declared) {
    declared->shapeLoc = reader_.loc(shapeNode);
    type.shape.clear();  // the binding decides it (readInputs)
  }
  if (!checkedNumel(type.shape))
    reader_.fail(shapeNode, "{}: shape {} has more elements than fit in 64 bits", what,
                 shapeString(type.shape));
  if (YamlNode dtype = spec["dtype"]) {
    std::string text = reader_.scalar(dtype, "dtype");
    auto parsed = parseDType(text);
    if (!parsed)
      reader_.fail(dtype, "{}: unknown dtype '{}'{}", what, text, unknownDTypeHint(text));
    type.dtype = *parsed;
  }
  if (YamlNode place = spec["device"]) type.device = device(place, what);
  if (initOut && spec["init"]) *initOut = spec["init"];
  return type;
}

Attrs ModelBuilder::initAttrs(const YamlNode& init, std::string_view what) const {
  Attrs attrs;
  if (init.isScalar() && (init.scalar() == "zeros" || init.scalar() == "ones")) {
    attrs.set("init", init.scalar());
    return attrs;
  }
  const char* expected =
      "zeros, ones, {constant: V}, {normal: {mean, std}} or {uniform: {low, high}}";
  if (!init.isMap() || init.size() != 1)
    reader_.fail(init, "{}: init must be one of {}", what, expected);
  std::string kind = reader_.scalar(init.begin()->first, "an init");
  YamlNode body = init.begin()->second;
  attrs.set("init", kind);
  if (kind == "constant") {
    attrs.set("value", reader_.number(body, fmt::format("the constant of {}", what)));
  } else if (kind == "normal" || kind == "uniform") {
    bool normal = kind == "normal";
    reader_.requireMap(body, fmt::format("the {} init of {}", kind, what));
    const char* first = normal ? "mean" : "low";
    const char* second = normal ? "std" : "high";
    reader_.checkKeys(body, {first, second}, fmt::format("the {} init of {}", kind, what));
    auto number = [&](const char* key, double absent) {
      return body[key] ? reader_.number(body[key], fmt::format("{} of {}", key, what)) : absent;
    };
    double a = number(first, 0.0);
    double b = number(second, 1.0);
    if (normal && b < 0)
      reader_.fail(body[second], "{}: std must not be negative, got {}", what, b);
    if (!normal && a > b) reader_.fail(body, "{}: uniform low {} is above high {}", what, a, b);
    attrs.set(first, a);
    attrs.set(second, b);
  } else {
    reader_.fail(init.begin()->first, "{}: unknown init '{}' (expected {})", what, kind, expected);
  }
  return attrs;
}

void ModelBuilder::readDimDefaults(const YamlNode& dims) {
  reader_.requireMap(dims, "dims");
  reader_.checkUniqueKeys(dims, "dims");
  for (const auto& entry : dims) {
    std::string name = reader_.scalar(entry.first, "a dims name");
    if (!isDimName(name))
      reader_.fail(entry.first,
                   "dims: '{}' is not a dimension name (letters, digits and _, not first a digit)",
                   name);
    int64_t size = reader_.integer(entry.second, fmt::format("dims: {}", name));
    if (size <= 0) reader_.fail(entry.second, "dims: {} must be positive, got {}", name, size);
    dimDefaults_[name] = {size, reader_.loc(entry.first)};
  }
}

void ModelBuilder::readInputs(const YamlNode& inputs) {
  reader_.requireMap(inputs, "inputs");
  reader_.checkUniqueKeys(inputs, "inputs");
  if (inputs.size() == 0) reader_.fail(inputs, "inputs must declare at least one input");
  std::vector<std::pair<DeclaredInput, TensorType>> declared;
  for (const auto& entry : inputs) {
    std::string name = reader_.name(entry.first, "an input name");
    define(name, entry.first);
    DeclaredInput input{name, {}, reader_.loc(entry.first), {}};
    TensorType type = tensorSpec(entry.second, fmt::format("input '{}'", name), nullptr, &input);
    declared.emplace_back(std::move(input), type);
  }
  std::vector<std::string> names;
  for (const auto& [input, type] : declared) names.push_back(input.name);
  for (const auto& [name, file] : givenInputs_)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      if (file.fromDataFile)
        throw Error(ErrorKind::Model, {file.file, 0, 0},
                    fmt::format("--data: array '{}' is not an input of the model (its inputs: {})",
                                name, fmt::join(names, ", ")));
      usageError("--input {}={}: the model has no input '{}' (inputs: {})", name, file.file, name,
                 fmt::join(names, ", "));
    }
  std::vector<DeclaredInput> shapes;
  for (const auto& [input, type] : declared) shapes.push_back(input);
  dims_ = DimBinding::bind(shapes, dimDefaults_, dimOverrides_, givenInputs_);
  if (!dims_.empty()) graph_->attrs().set("dims", dims_.str());
  for (auto& [input, type] : declared) {
    type.shape = dims_.shapeOf(input);
    if (!checkedNumel(type.shape))
      modelError(input.shapeLoc, "input '{}': shape {} has more elements than fit in 64 bits",
                 input.name, shapeString(type.shape));
    // Inputs arrive on the host unless the model loads them straight onto a device.
    if (!type.device.placed()) type.device = Device::cpu();
    graph_->addInput(input.name, type, input.loc);
  }
}

void ModelBuilder::readParams(const YamlNode& params) {
  reader_.requireMap(params, "params");
  reader_.checkUniqueKeys(params, "params");
  for (const auto& entry : params) readParam(entry.first, entry.second);
}

void ModelBuilder::readParam(const YamlNode& key, const YamlNode& spec) {
  std::string name = reader_.name(key, "a param name");
  define(name, key);
  std::string what = fmt::format("param '{}'", name);
  YamlNode init;
  TensorType type = tensorSpec(spec, what, &init, nullptr);
  std::optional<Attrs> initSpec;
  if (init) initSpec = initAttrs(init, what);  // undefined when the spec has none
  addParam(name, type, initSpec, reader_.loc(key), /*initWritten=*/initSpec.has_value());
}

}  // namespace gxc
