// ONNX models to gxc (see onnx_import.h): the graph's order, inputs and outputs, and the
// dispatch of each node to its translator.
#include "frontend/onnx_import.h"

#include <algorithm>
#include <cctype>
#include <queue>

#include <fmt/ranges.h>

#include "frontend/onnx_importer.h"

namespace gxc {
namespace {

const OnnxTranslators& translators() {
  static const OnnxTranslators table = [] {
    OnnxTranslators t;
    addElementwiseTranslators(t);
    addShapeTranslators(t);
    addNnTranslators(t);
    addReductionTranslators(t);
    return t;
  }();
  return table;
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// A dimension name: letters, digits and _, not first a digit.
std::string dimName(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "d_" + name;
  return name;
}

}  // namespace

bool isOnnxPath(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension == ".onnx";
}

OnnxImporter::OnnxImporter(const std::string& path, const ModelOptions& options, bool forImport,
                           int placeholderRound)
    : model_(readOnnxModel(path)),
      options_(options),
      forImport_(forImport),
      placeholderRound_(placeholderRound) {
  weights_ = std::make_shared<SafetensorsFile>(SafetensorsFile::inMemory(path));
  for (const onnx::TensorProto& tensor : model_.proto.graph().initializer())
    initializers_[tensor.name()] = &tensor;
  for (const onnx::ValueInfoProto& output : model_.proto.graph().output())
    graphOutputs_.insert(output.name());
}

std::string OnnxImporter::uniqueName(const std::string& onnxName) {
  std::string name;
  // PyTorch's exporter names nodes by module path: /layer1/conv/Conv reads layer1.conv.Conv.
  size_t start = onnxName.find_first_not_of('/');
  for (size_t i = start == std::string::npos ? onnxName.size() : start; i < onnxName.size(); ++i)
    name += onnxName[i] == '/' ? '.' : isNameChar(onnxName[i]) ? onnxName[i] : '_';
  if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    name = "v_" + name;
  std::string candidate = name;
  for (int suffix = 2; usedNames_.count(candidate); ++suffix)
    candidate = fmt::format("{}_{}", name, suffix);
  usedNames_.insert(candidate);
  return candidate;
}

// ONNX requires nodes in topological order, but readers tolerate files that are not: order
// them, refusing a name nothing produces and a cycle.
void OnnxImporter::orderNodes() {
  const onnx::GraphProto& graph = model_.proto.graph();
  std::set<std::string> available;
  for (const onnx::ValueInfoProto& input : graph.input()) available.insert(input.name());
  for (const auto& [name, tensor] : initializers_) available.insert(name);
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string& output : graph.node(i).output())
      if (!output.empty()) producer[output] = i;
  std::vector<int> waiting(graph.node_size(), 0);
  std::unordered_map<std::string, std::vector<int>> readers;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    SourceLoc at = SourceLoc::ofNode(model_.path, i, node.name());
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;  // refused later
    for (const std::string& input : node.input()) {
      if (input.empty() || available.count(input)) continue;
      if (!producer.count(input))
        modelError(at, "{} node reads '{}', which no node, graph input or initializer produces",
                   node.op_type(), input);
      ++waiting[i];
      readers[input].push_back(i);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // file order among ready
  for (int i = 0; i < graph.node_size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order_.push_back(&graph.node(i));
    indexOf_.push_back(i);
    for (const std::string& output : graph.node(i).output())
      for (int reader : readers[output])
        if (--waiting[reader] == 0) ready.push(reader);
    readers.erase(std::string());  // an omitted output reads nothing
  }
  if (order_.size() < static_cast<size_t>(graph.node_size()))
    for (int i = 0; i < graph.node_size(); ++i)
      if (waiting[i] > 0)
        modelError(SourceLoc::ofNode(model_.path, i, graph.node(i).name()),
                   "{} node is on a cycle: the graph's nodes read each other's outputs",
                   graph.node(i).op_type());
}

void OnnxImporter::refuseUnsupportedOps() const {
  std::vector<std::string> unsupported;
  for (size_t k = 0; k < order_.size(); ++k) {
    const onnx::NodeProto& node = *order_[k];
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && translators().count(node.op_type())) continue;
    unsupported.push_back(fmt::format("{}{} (node {} \"{}\", opset {})",
                                      defaultDomain ? "" : node.domain() + ".", node.op_type(),
                                      indexOf_[k], node.name(), defaultDomain ? model_.opset : 0));
  }
  if (unsupported.empty()) return;
  modelError(SourceLoc{model_.path, 0, 0},
             "{} node{} use{} ONNX ops gxc does not have (docs/onnx.md lists those it has): {}",
             unsupported.size(), unsupported.size() == 1 ? "" : "s",
             unsupported.size() == 1 ? "s" : "", fmt::join(unsupported, ", "));
}

void OnnxImporter::declareInputs(YAML::Node& inputs) {
  givenOnnxInputs_ = options_.givenInputs;
  std::map<std::string, GivenInput> given;
  std::set<std::string> fixedAxes;
  // The axes `--dim` fixes; the placeholders added below are not among them, so that a second
  // input with the same axis keeps it symbolic too.
  const std::map<std::string, int64_t> fixedByDim = options_.dims;
  for (const onnx::ValueInfoProto& input : model_.proto.graph().input()) {
    if (initializers_.count(input.name())) continue;  // older exporters list them as inputs
    SourceLoc at{model_.path, 0, 0};
    if (!input.type().has_tensor_type())
      modelError(at, "graph input '{}' is not a tensor (gxc takes tensor inputs only)",
                 input.name());
    const onnx::TypeProto::Tensor& type = input.type().tensor_type();
    std::optional<DType> dtype = dtypeFromOnnx(type.elem_type());
    if (!dtype)
      modelError(at, "graph input '{}' has element type {}, which gxc has no dtype for",
                 input.name(), onnxTypeName(type.elem_type()));
    if (!type.has_shape())
      modelError(at, "graph input '{}' has no shape (gxc needs at least its rank)", input.name());
    std::string name = uniqueName(input.name());
    YAML::Node shape(YAML::NodeType::Sequence);
    for (int d = 0; d < type.shape().dim_size(); ++d) {
      const onnx::TensorShapeProto::Dimension& dim = type.shape().dim(d);
      if (dim.has_dim_value()) {
        if (dim.dim_value() <= 0)
          modelError(at, "graph input '{}': dim {} is {} (gxc shapes are positive)", input.name(),
                     d, dim.dim_value());
        shape.push_back(dim.dim_value());
      } else {
        std::string axis = dimName(dim.has_dim_param() && !dim.dim_param().empty()
                                       ? dim.dim_param()
                                       : fmt::format("{}_dim{}", name, d));
        auto fixed = fixedByDim.find(axis);
        if (forImport_ && fixed != fixedByDim.end()) {  // --dim fixes it in the model file
          shape.push_back(fixed->second);
          fixedAxes.insert(axis);
          continue;
        }
        hasDynamicAxes_ = true;
        shape.push_back(axis);
        if (forImport_ && !options_.dims.count(axis)) {
          // The import evaluates the graph for a binding of its own: distinct primes, so that
          // no axis broadcasts as a 1 would, no two are confused, and a size computed from
          // them factors back into them (onnx_dynamic_axes.cpp); round 1 uses none of round
          // 0's.
          static constexpr int64_t kPlaceholders[2][12] = {
              {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37},
              {41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89}};
          if (placeholderSizes_.size() == std::size(kPlaceholders[0]))
            modelError(at,
                       "graph input '{}': more than {} dynamic axes; import with --dim for some",
                       input.name(), std::size(kPlaceholders[0]));
          options_.dims[axis] = kPlaceholders[placeholderRound_][placeholderSizes_.size()];
          placeholderSizes_[axis] = options_.dims[axis];
        }
      }
    }
    YAML::Node spec;
    spec["shape"] = shape;
    spec["shape"].SetStyle(YAML::EmitterStyle::Flow);
    spec["dtype"] = dtypeText(*dtype);
    spec.SetStyle(YAML::EmitterStyle::Flow);
    inputs[name] = spec;
    gxcName_[input.name()] = name;
    if (name != input.name()) result_.renamedInputs.emplace_back(input.name(), name);
    auto file = options_.givenInputs.find(input.name());
    if (file != options_.givenInputs.end()) given[name] = file->second;
  }
  for (const auto& [name, file] : options_.givenInputs)
    if (!gxcName_.count(name)) {
      std::vector<std::string> names;
      for (const auto& [onnxName, gxc] : gxcName_) names.push_back(onnxName);
      if (file.fromDataFile)  // gxc train's --data, as the YAML reader says it
        throw Error(ErrorKind::Model, {file.file, 0, 0},
                    fmt::format("--data: array '{}' is not an input of the model (its inputs: {})",
                                name, fmt::join(names, ", ")));
      usageError("--input {}={}: the model has no input '{}' (inputs: {})", name, file.file, name,
                 fmt::join(names, ", "));
    }
  options_.givenInputs = std::move(given);
  for (const std::string& axis : fixedAxes) options_.dims.erase(axis);
}

std::string OnnxImporter::paramFor(const std::string& onnxName, const OnnxConstant& constant,
                                   const SourceLoc& at) {
  auto known = gxcName_.find(onnxName);
  if (known != gxcName_.end()) return known->second;
  // A constant computed from the dynamic axes' sizes: made by layers where its node has them;
  // else a param, which onnx_dynamic_axes.cpp refuses if its values are not the same at every
  // binding (Range(seq) is refused; Range of a fixed dim, flagged all the same, is not).
  if (constant.fromDynamicAxes && forImport_)
    if (std::optional<std::string> computed = computeInGraph(onnxName)) return *computed;
  for (int64_t dim : constant.tensor.shape())
    if (dim == 0)
      modelError(at,
                 "'{}' has a 0-sized dim {}: such tensors are not supported (gxc shapes are "
                 "positive)",
                 onnxName, shapeString(constant.tensor.shape()));
  std::string name = uniqueName(onnxName);
  weights_->add(name, constant.tensor);
  YAML::Node spec;
  spec["shape"] = yamlInts(constant.tensor.shape());
  spec["dtype"] = dtypeText(constant.tensor.dtype());
  spec.SetStyle(YAML::EmitterStyle::Flow);
  params_[name] = spec;
  paramLocs_[name] = at;
  if (name != onnxName && initializers_.count(onnxName))
    result_.renamedParams.emplace_back(onnxName, name);
  builder_->addParamSpec(name, spec, at);
  gxcName_[onnxName] = name;
  return name;
}

// A param would hold this binding's values: an import computes the tensor with the layers
// of the node that makes it instead (zeros of x's shape, a constant expanded to [batch, seq]),
// whose sizes onnx_dynamic_axes.cpp writes with the axes' names. That node's own constant
// inputs computed from the axes are made the same way, back to the shape arithmetic, which
// has no layers (nullopt: the value stays a param).
std::optional<std::string> OnnxImporter::computeInGraph(const std::string& onnxName) {
  auto producer = producerOf_.find(onnxName);
  if (producer == producerOf_.end()) return std::nullopt;
  const onnx::NodeProto& node = *order_[producer->second];
  static const std::set<std::string> kShapeArithmetic = {"Constant", "Range", "Shape",
                                                         "Size",     "Mod",   "Xor"};
  if (kShapeArithmetic.count(node.op_type()) || node.output_size() != 1) return std::nullopt;
  OnnxNode computing(*this, node, indexOf_[producer->second]);
  translators().at(node.op_type())(computing);
  auto computed = gxcName_.find(onnxName);
  GXC_CHECK(computed != gxcName_.end(), "the {} translator left '{}' undefined", node.op_type(),
            onnxName);
  return computed->second;
}

void OnnxImporter::addLayer(const YAML::Node& layer, const SourceLoc& at,
                            const std::string& onnxOp) {
  builder_->addLayer(layer, at);
  layers_.push_back(layer);
  layerOrigins_.push_back({at, onnxOp});
}

void OnnxImporter::translate(const onnx::NodeProto& proto, int index) {
  OnnxNode node(*this, proto, index);
  if (!foldOnnxNode(node)) translators().at(proto.op_type())(node);
  for (size_t i = 0; i < node.outputCount(); ++i) {
    const std::string& output = proto.output(static_cast<int>(i));
    GXC_CHECK(output.empty() || gxcName_.count(output) || constants_.count(output),
              "the {} translator left output '{}' undefined", proto.op_type(), output);
  }
}

void OnnxImporter::declareOutputs() {
  YAML::Node outputs(YAML::NodeType::Sequence);
  for (const onnx::ValueInfoProto& output : model_.proto.graph().output()) {
    SourceLoc at{model_.path, 0, 0};
    std::string name;
    auto value = gxcName_.find(output.name());
    if (value != gxcName_.end()) {
      name = value->second;
    } else {
      auto constant = constants_.find(output.name());
      if (constant == constants_.end())
        modelError(at, "graph output '{}' is produced by no node, input or initializer",
                   output.name());
      name = paramFor(output.name(), constant->second, at);
    }
    outputs.push_back(name);
    if (name != output.name()) result_.renamedOutputs.emplace_back(output.name(), name);
  }
  outputs.SetStyle(YAML::EmitterStyle::Flow);
  root_["outputs"] = outputs;
}

ImportedOnnx OnnxImporter::run() {
  orderNodes();
  refuseUnsupportedOps();
  root_["gxc"] = 1;
  std::string graphName = model_.proto.graph().name();
  std::string modelName = std::filesystem::path(model_.path).stem().string();
  root_["name"] = uniqueName(graphName.empty() ? modelName : graphName);
  YAML::Node inputs(YAML::NodeType::Map);
  declareInputs(inputs);
  if (inputs.size() == 0)
    modelError(SourceLoc{model_.path, 0, 0},
               "the graph has no inputs (gxc models take at least one)");
  root_["inputs"] = inputs;
  params_ = YAML::Node(YAML::NodeType::Map);
  layers_ = YAML::Node(YAML::NodeType::Sequence);
  ModelOptions builderOptions = options_;
  builderOptions.inMemoryWeights = weights_;
  builder_ = std::make_unique<ModelBuilder>(model_.path, model_.directory.string(), builderOptions);
  builder_->beginModel(root_, SourceLoc{model_.path, 0, 0});
  findGelus();
  for (size_t k = 0; k < order_.size(); ++k) {
    // A GELU's members: its layer at the first, nothing at the others (unless it was refused,
    // which leaves them all to their translators).
    if (absorbed_[k] && (!gelus_.count(k) || emitGelu(k))) continue;
    translate(*order_[k], indexOf_[k]);
  }
  declareOutputs();
  result_.graph = builder_->finishModel(root_);
  if (params_.size() > 0) root_["params"] = params_;
  root_["layers"] = layers_;
  result_.model = root_;
  result_.weights = weights_;
  return std::move(result_);
}

ImportedOnnx importOnnx(const std::string& path, const ModelOptions& options, bool forImport) {
  if (forImport) return importKeepingAxesDynamic(path, options);
  return OnnxImporter(path, options, forImport).run();
}

}  // namespace gxc
