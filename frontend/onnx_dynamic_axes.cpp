// `gxc import` of a model whose inputs have dynamic axes (onnx_importer.h:
// importKeepingAxesDynamic).
//
// The importer evaluates shapes with numbers: it lowers the graph for one binding of the axes
// (placeholder sizes), so every size it writes (a Flatten's [outer, inner], a Reshape's 0, a
// Squeeze's remaining dims, shape arithmetic) is that binding's. Written as is, the model file
// would run at that binding only and give wrong shapes, or wrong answers, at any other.
//
// So the model is imported twice, at two bindings that share no size (distinct primes), and
// the two model files are compared:
//  - a number equal in both does not depend on the axes and stays;
//  - a reshape's (or an expand's) shape entry that differs is a size computed from the axes:
//    the model format writes it with their names, a product such as `batch*seq*4`, solved
//    from the two values (the exponent of each axis is how many more times its round-0 prime
//    divides the round-0 value than the round-1 value; the rest is the integer factor, which
//    must then give the round-1 value too);
//  - any other number that differs (an attribute the format holds only as an integer, a param's
//    values), an entry that is no such product, or layers that differ in kind are refused,
//    naming the ONNX node, so that the file written is right at every binding or is not
//    written.
// A tensor computed from the axes that a layer reads is made by layers in the first place
// (OnnxImporter::computeInGraph), not a param, so its sizes are among those compared.
// A number that depends on the axes but happens to be equal at both bindings (batch % 2 at
// two odd sizes) would pass for a constant: the exporters' shape arithmetic computes no such
// thing.
#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include <fmt/ranges.h>

#include "frontend/onnx_importer.h"

namespace gxc {
namespace {

struct Import {
  ImportedOnnx result;
  std::vector<OnnxLayerOrigin> origins;
  std::map<std::string, int64_t> placeholders;
  std::map<std::string, SourceLoc> paramLocs;
};

Import importAt(const std::string& path, const ModelOptions& options, int round) {
  OnnxImporter importer(path, options, /*forImport=*/true, round);
  Import out{importer.run(), {}, {}, {}};
  out.origins = importer.layerOrigins();
  out.placeholders = importer.placeholders();
  out.paramLocs = importer.paramLocs();
  return out;
}

bool sameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(a.data(), a.data() + a.nbytes(), b.data());
}

int multiplicity(int64_t value, int64_t prime) {
  int count = 0;
  for (; value != 0 && value % prime == 0; value /= prime) ++count;
  return count;
}

// `batch*seq*4` from its values at the two bindings, or nullopt when no product of the axes
// and a positive integer gives both.
std::optional<std::string> productOfAxes(int64_t first, int64_t second,
                                         const std::map<std::string, int64_t>& firstSizes,
                                         const std::map<std::string, int64_t>& secondSizes) {
  if (first <= 0 || second <= 0) return std::nullopt;
  std::vector<std::string> factors;
  int64_t rest = first, restSecond = second;
  for (const auto& [axis, prime] : firstSizes) {
    const int64_t other = secondSizes.at(axis);
    const int exponent = multiplicity(first, prime) - multiplicity(second, prime);
    if (exponent < 0 || exponent != multiplicity(second, other) - multiplicity(first, other))
      return std::nullopt;
    for (int k = 0; k < exponent; ++k) {
      factors.push_back(axis);
      rest /= prime;
      if (restSecond % other != 0) return std::nullopt;
      restSecond /= other;
    }
  }
  if (rest != restSecond || factors.empty()) return std::nullopt;
  if (rest != 1) factors.push_back(std::to_string(rest));
  return fmt::format("{}", fmt::join(factors, "*"));
}

class AxesWriter {
 public:
  AxesWriter(const Import& first, const Import& second) : first_(first), second_(second) {
    for (const auto& [axis, size] : first.placeholders) axes_.push_back(axis);
  }

  void writeLayers(YAML::Node layers) const {
    const YAML::Node& others = second_.result.model["layers"];
    GXC_CHECK(first_.origins.size() == layers.size() && second_.origins.size() == others.size(),
              "an ONNX import lost track of its layers' nodes");
    for (size_t i = 0; i < layers.size(); ++i) {
      if (i >= others.size()) differentLayers(i);
      writeLayer(layers[i], others[i], first_.origins[i]);
    }
    if (others.size() > layers.size()) differentLayers(layers.size());
  }

  // Inputs and outputs are names and the inputs' declared shapes, which no placeholder
  // reaches; a difference would be a gxc bug.
  void checkSame(const char* key) const {
    GXC_CHECK(YAML::Dump(first_.result.model[key]) == YAML::Dump(second_.result.model[key]),
              "the ONNX import's {} depend on the dynamic axes' sizes", key);
  }

  // A param made from a constant computed with a dim's size (indices counted from the end of a
  // dynamic axis, made non-negative) holds this binding's numbers.
  void checkParams() const {
    const YAML::Node params = first_.result.model["params"];
    const YAML::Node others = second_.result.model["params"];
    if (!params && !others) return;
    GXC_CHECK(params && others && params.size() == others.size(),
              "the ONNX import's params differ in number between the bindings of its axes");
    for (const auto& entry : params) {
      const std::string name = entry.first.Scalar();
      const SourceLoc& at = first_.paramLocs.at(name);
      if (!others[name] || YAML::Dump(entry.second) != YAML::Dump(others[name]) ||
          !sameTensor(first_.result.weights->read(name), second_.result.weights->read(name)))
        modelError(at,
                   "param '{}' is computed from the sizes of the dynamic axes ({}), and a model "
                   "file can only hold one binding's values: import with --dim for every "
                   "dynamic axis",
                   name, fmt::join(axes_, ", "));
    }
  }

 private:
  void writeLayer(YAML::Node layer, const YAML::Node& other, const OnnxLayerOrigin& origin) const {
    const std::string op = layer["op"].Scalar();
    if (layer.size() != other.size() || op != other["op"].Scalar() ||
        layer["name"].Scalar() != other["name"].Scalar())
      refuse(origin, "its translation into gxc layers");
    for (auto entry : layer) {
      const std::string key = entry.first.Scalar();
      const YAML::Node& otherValue = other[key];
      if (!otherValue) refuse(origin, fmt::format("the keys of its {} layer", op));
      if (YAML::Dump(entry.second) == YAML::Dump(otherValue)) continue;
      if ((op == "reshape" || op == "expand") && key == "shape")
        writeShape(op, layer["shape"], otherValue, origin);
      else
        refuse(origin, fmt::format("its {} layer's `{}`", op, key));
    }
  }

  void writeShape(const std::string& op, YAML::Node shape, const YAML::Node& other,
                  const OnnxLayerOrigin& origin) const {
    if (!shape.IsSequence() || !other.IsSequence() || shape.size() != other.size())
      refuse(origin, fmt::format("its {}'s rank", op));
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto value = shape[d].as<int64_t>(), otherValue = other[d].as<int64_t>();
      if (value == otherValue) continue;
      std::optional<std::string> product =
          productOfAxes(value, otherValue, first_.placeholders, second_.placeholders);
      if (!product)
        modelError(origin.loc,
                   "{} node: dim {} of its {}'s shape depends on the dynamic axes ({}) other "
                   "than as a product of them and integers, the only form a model file writes: "
                   "import with --dim for every dynamic axis",
                   origin.onnxOp, d, op, fmt::join(axes_, ", "));
      shape[d] = *product;
    }
  }

  [[noreturn]] void refuse(const OnnxLayerOrigin& origin, const std::string& what) const {
    modelError(origin.loc,
               "{} node: {} depends on the sizes of the dynamic axes ({}), and a model file can "
               "only hold one binding's number there: import with --dim for every dynamic axis",
               origin.onnxOp, what, fmt::join(axes_, ", "));
  }

  [[noreturn]] void differentLayers(size_t i) const {
    const OnnxLayerOrigin& origin =
        i < first_.origins.size() ? first_.origins[i] : second_.origins[i];
    refuse(origin, "its translation into gxc layers");
  }

  const Import& first_;
  const Import& second_;
  std::vector<std::string> axes_;
};

}  // namespace

ImportedOnnx importKeepingAxesDynamic(const std::string& path, const ModelOptions& options) {
  Import first = importAt(path, options, 0);
  if (first.placeholders.empty()) return std::move(first.result);
  Import second = importAt(path, options, 1);
  AxesWriter writer(first, second);
  for (const char* key : {"inputs", "outputs"}) writer.checkSame(key);
  writer.checkParams();
  writer.writeLayers(first.result.model["layers"]);
  return std::move(first.result);
}

}  // namespace gxc
