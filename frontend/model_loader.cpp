#include "frontend/model_loader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/depthguard.h>

#include "frontend/model_builder.h"
#include "frontend/onnx_import.h"

namespace gxc {
namespace {

// A position (1-based) and what is wrong there.
struct YamlProblem {
  int line = 0;
  int col = 0;
  std::string message;
};

// yaml-cpp names the grammar rule that broke ("illegal map value", "end of map flow not found")
// at the place where it gave up, often lines after the mistake. For the two mistakes people
// make most in a hand-written model, say what to fix and point at its cause instead.

// The first line up to `lastLine` (1-based) whose indentation holds a tab.
std::optional<YamlProblem> tabInIndentation(const std::string& text, int lastLine) {
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; number <= lastLine && std::getline(lines, line); ++number) {
    size_t indent = line.find_first_not_of(" \t");
    if (indent == std::string::npos || line[indent] == '#') continue;  // blank or a comment
    size_t tab = line.find('\t');
    if (tab < indent)
      return YamlProblem{number, static_cast<int>(tab) + 1,
                         "tab in indentation (YAML indents with spaces only)"};
  }
  return std::nullopt;
}

// The first '[' or '{' left open or closed by the wrong bracket, or a closing bracket with no
// opening one. Comments and quoted scalars are skipped; names in a model hold no brackets.
std::optional<YamlProblem> unbalancedFlow(const std::string& text) {
  struct Open {
    char bracket;
    int line, col;
  };
  std::vector<Open> open;
  int line = 1, col = 0;
  char quote = 0, previous = '\n';
  for (char c : text) {
    ++col;
    if (c == '\n') {
      ++line, col = 0;
      if (quote == '#') quote = 0;
    } else if (quote) {
      if (c == quote && quote != '#') quote = 0;
    } else if (c == '#' && (previous == ' ' || previous == '\t' || previous == '\n')) {
      quote = '#';  // a comment runs to the end of the line
    } else if ((c == '"' || c == '\'') && std::strchr(" \t\n[{,:", previous)) {
      quote = c;
    } else if (c == '[' || c == '{') {
      open.push_back({c, line, col});
    } else if (c == ']' || c == '}') {
      char match = c == ']' ? '[' : '{';
      if (open.empty())
        return YamlProblem{line, col,
                           fmt::format("'{}' closes nothing (no '{}' is open)", c, match)};
      if (open.back().bracket != match)
        return YamlProblem{open.back().line, open.back().col,
                           fmt::format("'{}' is not closed before the '{}' at line {}, column {}",
                                       open.back().bracket, c, line, col)};
      open.pop_back();
    }
    previous = c;
  }
  if (open.empty()) return std::nullopt;
  return YamlProblem{open.front().line, open.front().col,
                     fmt::format("'{}' is never closed", open.front().bracket)};
}

// yaml-cpp quotes the offending character raw, even a control character.
std::string printable(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  return out;
}

[[noreturn]] void invalidYaml(const std::string& text, const std::string& fileName,
                              const YAML::Exception& error) {
  YamlProblem problem{error.mark.line + 1, error.mark.column + 1, printable(error.msg)};
  // yaml-cpp reports its nesting limit as "bad file".
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&error))
    problem.message = fmt::format("lists and maps nested too deeply (the YAML reader stops at {})",
                                  deep->depth());
  if (auto tab = tabInIndentation(text, problem.line))
    problem = *tab;
  else if (auto flow = unbalancedFlow(text); flow && flow->line <= problem.line)
    problem = *flow;
  modelError({fileName, problem.line, problem.col}, "invalid YAML: {}", problem.message);
}

// True when the text holds nothing but blank lines and comments.
bool onlyComments(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start != std::string::npos && line[start] != '#') return false;
  }
  return true;
}

}  // namespace

ModelBuilder::ModelBuilder(const std::string& fileName, const std::string& baseDir,
                           const ModelOptions& options)
    : reader_(fileName),
      baseDir_(baseDir),
      weightsOverride_(options.weightsPath),
      dimOverrides_(options.dims),
      givenInputs_(options.givenInputs),
      inMemoryWeights_(options.inMemoryWeights),
      weightsPartial_(options.weightsPartial) {}

void ModelBuilder::define(const std::string& name, const YamlNode& node) {
  auto previous = definedAt_.find(name);
  if (previous != definedAt_.end()) {
    const Value* owner = graph_->find(name);
    const char* kind = !owner || !owner->producer               ? "the input"
                       : owner->producer->kind == OpKind::Param ? "the param"
                                                                : "the layer";
    // A layer's own params are defined at the layer (its map), everything else at its name.
    std::string what = node.isMap() ? fmt::format("layer '{}' creates param '{}', but that name",
                                                  node["name"].scalar(), name)
                                    : fmt::format("name '{}'", name);
    reader_.fail(node, "{} is already taken by {} at line {}", what, kind, previous->second);
  }
  definedAt_.emplace(name, reader_.loc(node).line);
}

void ModelBuilder::readTopLevel(const YamlNode& root) {
  reader_.requireMap(root, "a model file");
  reader_.checkKeys(root,
                    {"gxc", "name", "seed", "weights", "default_device", "dims", "inputs", "params",
                     "layers", "outputs", "train"},
                    "the model");
  YamlNode version = reader_.required(root, "gxc", "a model file");
  if (reader_.scalar(version, "the format version") != "1")
    reader_.fail(version, "unsupported format version '{}' (this gxc reads version 1)",
                 version.scalar());
  graph_ = std::make_unique<Graph>(
      reader_.name(reader_.required(root, "name", "the model"), "the model name"));
  if (root["seed"]) {
    seed_ = reader_.integer(root["seed"], "seed");
    if (seed_ < 0) reader_.fail(root["seed"], "seed must not be negative, got {}", seed_);
  }
  graph_->attrs().set("seed", seed_);
  if (root["default_device"]) defaultDevice_ = device(root["default_device"], "default_device");
  openWeights(root);
}

void ModelBuilder::readOutputs(const YamlNode& root) {
  YamlNode outputs = reader_.required(root, "outputs", "the model");
  reader_.requireSequence(outputs, "outputs");
  if (outputs.size() == 0) reader_.fail(outputs, "outputs must name at least one layer");
  std::set<std::string> seen;
  for (const YamlNode& output : outputs) {
    std::string name = reader_.name(output, "an output");
    Value* value = graph_->find(name);
    // A param may be an output (format 1.1): how to see what its init or the weights file
    // made. Like every output, it comes back to the host.
    if (!value)
      reader_.fail(output, "output '{}' is not a layer, input or param of the model", name);
    if (!seen.insert(name).second) reader_.fail(output, "output '{}' is listed twice", name);
    graph_->addOutput(name, value);
  }
}

std::unique_ptr<Graph> ModelBuilder::build(const YamlNode& root) {
  readTopLevel(root);
  YamlNode layers = reader_.required(root, "layers", "the model");
  reader_.requireSequence(layers, "layers");
  fileLayers_ = layers;
  definedAt_.reserve(layers.size());
  // A layer is an op and often a param or two (linear, conv2d, norms).
  graph_->reserve(3 * layers.size());
  if (root["dims"]) readDimDefaults(root["dims"]);
  readInputs(reader_.required(root, "inputs", "the model"));
  if (root["params"]) readParams(root["params"]);
  readLayers(layers, std::nullopt);
  readOutputs(root);
  if (root["train"]) readTrainSection(root["train"]);
  checkWeightsMatchParams(root);
  fileLayers_ = {};
  return std::move(graph_);
}

void ModelBuilder::beginModel(const YAML::Node& model, const SourceLoc& at) {
  reader_.locateUnmarkedAt(at);
  std::unique_ptr<YamlDocument> document = YamlDocument::fromNode(model);
  YamlNode root = document->root();
  readTopLevel(root);
  if (root["dims"]) readDimDefaults(root["dims"]);
  readInputs(reader_.required(root, "inputs", "the model"));
}

void ModelBuilder::addLayer(const YAML::Node& layer, const SourceLoc& at) {
  reader_.locateUnmarkedAt(at);
  readLayer(YamlDocument::fromNode(layer)->root(), std::nullopt);
}

void ModelBuilder::addParamSpec(const std::string& name, const YAML::Node& spec,
                                const SourceLoc& at) {
  reader_.locateUnmarkedAt(at);
  YAML::Node params;
  params[name] = spec;
  std::unique_ptr<YamlDocument> document = YamlDocument::fromNode(params);
  YamlNode::Item param = *document->root().begin();
  readParam(param.first, param.second);
}

std::unique_ptr<Graph> ModelBuilder::finishModel(const YAML::Node& model) {
  std::unique_ptr<YamlDocument> document = YamlDocument::fromNode(model);
  YamlNode root = document->root();
  readOutputs(root);
  if (root["train"]) readTrainSection(root["train"]);
  checkWeightsMatchParams(root);
  return std::move(graph_);
}

std::unique_ptr<Graph> loadModelFromString(const std::string& text, const std::string& fileName,
                                           const std::string& baseDir,
                                           const ModelOptions& options) {
  // yaml-cpp stops reading at a NUL byte as if the file ended there.
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    size_t lineStart = text.rfind('\n', nul);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    int line = static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n')) + 1;
    modelError({fileName, line, static_cast<int>(nul - lineStart) + 1},
               "the model file holds a NUL byte; it is not a YAML text file");
  }
  std::unique_ptr<YamlDocument> document;
  try {
    document = YamlDocument::parse(text);
  } catch (const YAML::Exception& e) {
    invalidYaml(text, fileName, e);
  }
  if (onlyComments(text)) {
    bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
    modelError({fileName, 1, 1}, "the model file {}", blank ? "is empty" : "holds only comments");
  }
  return ModelBuilder(fileName, baseDir, options).build(document->root());
}

std::unique_ptr<Graph> loadModel(const std::string& path, const ModelOptions& options) {
  if (isOnnxPath(path)) {
    return std::move(importOnnx(path, options).graph);
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  int openError = in ? 0 : (errno != 0 ? errno : EIO);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) openError = EISDIR;
  if (openError != 0)
    throw Error(ErrorKind::Model, {path, 0, 0},
                fmt::format("cannot open model file: {}", std::strerror(openError)));
  std::stringstream text;
  text << in.rdbuf();
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  return loadModelFromString(text.str(), path, baseDir, options);
}

}  // namespace gxc
