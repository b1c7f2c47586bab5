#include "frontend/symbolic_dims.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gxc {
namespace {

// Where a name is used: "input 'x', dim 0, at model.yaml:4:12".
struct DimUse {
  std::string input;
  size_t index = 0;
  SourceLoc loc;
  std::string str() const {
    return fmt::format("input '{}', dim {}, at {}", input, index, loc.where());
  }
};

// A value bound by an input file.
struct FileBinding {
  int64_t value = 0;
  std::string input, file;
  size_t index = 0;
};

// `firstDim`, when given, is written in place of dim 0.
std::string declaredShapeString(const DeclaredInput& input, const std::string& firstDim = "") {
  std::vector<std::string> dims;
  for (const DeclaredDim& dim : input.dims)
    dims.push_back(!firstDim.empty() && dims.empty() ? firstDim
                   : dim.name.empty()                ? std::to_string(dim.size)
                                                     : dim.name);
  return fmt::format("[{}]", fmt::join(dims, ","));
}

std::string namesOf(const std::map<std::string, std::vector<DimUse>>& uses) {
  std::vector<std::string> names;
  for (const auto& [name, where] : uses) names.push_back(name);
  return names.empty() ? "it has none" : fmt::format("it has {}", fmt::join(names, ", "));
}

// A training batch against an input whose dim 0 is a number: the batch must have that many
// samples, or the step would run on a tensor of another shape than its plan's.
void checkFixedBatch(const DeclaredInput& input, const GivenInput& batch) {
  if (input.dims.empty() || !input.dims[0].name.empty()) return;
  const int64_t rows = batch.shape().at(0);
  if (rows == input.dims[0].size) return;
  modelError(input.dims[0].loc,
             "input '{}': dim 0 is fixed at {}, but training feeds it batches of {} samples "
             "({}); write dim 0 as a symbolic dimension ({}) so that each batch binds it",
             input.name, input.dims[0].size, rows, batch.batchOrigin,
             declaredShapeString(input, "batch"));
}

std::map<std::string, FileBinding> bindFromFiles(const std::vector<DeclaredInput>& inputs,
                                                 const std::map<std::string, GivenInput>& given) {
  std::map<std::string, FileBinding> bound;
  for (const DeclaredInput& input : inputs) {
    auto file = given.find(input.name);
    if (file == given.end()) continue;
    if (!file->second.batchOrigin.empty()) checkFixedBatch(input, file->second);
    if (!input.symbolic()) continue;
    const Shape shape = file->second.shape();
    if (shape.size() != input.dims.size())
      modelError({file->second.file, 0, 0},
                 "input '{}' has {} dims, {}, but the model declares {} dims, {} ({})", input.name,
                 shape.size(), shapeString(shape), input.dims.size(), declaredShapeString(input),
                 input.loc.where());
    for (size_t i = 0; i < shape.size(); ++i) {
      const std::string& name = input.dims[i].name;
      if (name.empty()) continue;  // a fixed size: checked against the file with the dtype
      if (shape[i] <= 0)
        modelError({file->second.file, 0, 0},
                   "input '{}' has size {} in dim {} ({}); sizes must be positive", input.name,
                   shape[i], i, name);
      auto [it, fresh] =
          bound.emplace(name, FileBinding{shape[i], input.name, file->second.file, i});
      if (!fresh && it->second.value != shape[i])
        modelError({file->second.file, 0, 0},
                   "input '{}' has {} = {} (dim {}), but input '{}' ({}) has {} = {} (dim {}); "
                   "one name has one size in a run",
                   input.name, name, shape[i], i, it->second.input, it->second.file, name,
                   it->second.value, it->second.index);
    }
  }
  return bound;
}

}  // namespace

bool DeclaredInput::symbolic() const {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DeclaredDim& dim) { return !dim.name.empty(); });
}

bool isDimName(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
    return false;
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

DimBinding DimBinding::bind(const std::vector<DeclaredInput>& inputs,
                            const std::map<std::string, DimDefault>& defaults,
                            const std::map<std::string, int64_t>& overrides,
                            const std::map<std::string, GivenInput>& given) {
  std::map<std::string, std::vector<DimUse>> uses;
  for (const DeclaredInput& input : inputs)
    for (size_t i = 0; i < input.dims.size(); ++i)
      if (!input.dims[i].name.empty())
        uses[input.dims[i].name].push_back({input.name, i, input.dims[i].loc});
  std::map<std::string, FileBinding> fromFiles = bindFromFiles(inputs, given);

  for (const auto& [name, value] : overrides) {
    if (!uses.count(name))
      usageError("--dim {}={}: the model has no symbolic dimension '{}' ({})", name, value, name,
                 namesOf(uses));
    auto file = fromFiles.find(name);
    if (file != fromFiles.end() && file->second.value != value)
      modelError({file->second.file, 0, 0},
                 "input '{}' has {} = {} (dim {}), but the command line says --dim {}={}",
                 file->second.input, name, file->second.value, file->second.index, name, value);
  }
  for (const auto& [name, entry] : defaults)
    if (!uses.count(name))
      modelError(entry.loc, "dims: '{}' is not a dimension of any input ({})", name, namesOf(uses));

  DimBinding binding;
  std::vector<std::string> unbound;
  for (const auto& [name, where] : uses) {
    if (auto file = fromFiles.find(name); file != fromFiles.end())
      binding.values_[name] = file->second.value;
    else if (auto cli = overrides.find(name); cli != overrides.end())
      binding.values_[name] = cli->second;
    else if (auto model = defaults.find(name); model != defaults.end())
      binding.values_[name] = model->second.size;
    else
      unbound.push_back(fmt::format("'{}' ({})", name, where.front().str()));
  }
  if (!unbound.empty())
    usageError(
        "no size for the symbolic dimension{} {}: give an input file that has it "
        "(--input NAME=FILE.npy), --dim NAME=N, or a default under `dims:` in the model",
        unbound.size() == 1 ? "" : "s", fmt::join(unbound, ", "));
  return binding;
}

std::optional<int64_t> DimBinding::find(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Shape DimBinding::shapeOf(const DeclaredInput& input) const {
  Shape shape;
  for (const DeclaredDim& dim : input.dims) {
    std::optional<int64_t> size = dim.name.empty() ? dim.size : find(dim.name);
    GXC_CHECK(size, "input '{}': dimension '{}' was not bound", input.name, dim.name);
    shape.push_back(*size);
  }
  return shape;
}

std::string DimBinding::str() const {
  std::vector<std::string> entries;
  for (const auto& [name, value] : values_) entries.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(entries, ", "));
}

std::optional<int64_t> DimBinding::evaluate(std::string_view text, std::string* error) const {
  int64_t product = 1;
  size_t start = 0;
  while (true) {
    size_t star = text.find('*', start);
    std::string_view factor =
        text.substr(start, star == std::string_view::npos ? star : star - start);
    while (!factor.empty() && factor.front() == ' ') factor.remove_prefix(1);
    while (!factor.empty() && factor.back() == ' ') factor.remove_suffix(1);
    int64_t value = 0;
    if (isDimName(factor)) {
      std::optional<int64_t> bound = find(factor);
      if (!bound) {
        *error = fmt::format("'{}' is not a symbolic dimension of the model's inputs{}", factor,
                             values_.empty() ? "" : fmt::format(" ({})", str()));
        return std::nullopt;
      }
      value = *bound;
    } else {
      auto [end, failed] = std::from_chars(factor.data(), factor.data() + factor.size(), value);
      if (failed != std::errc() || end != factor.data() + factor.size() || value <= 0) {
        *error = fmt::format(
            "'{}' is neither a positive integer nor a symbolic dimension's name (an entry is an "
            "integer, -1, a name, or a product such as batch*8)",
            factor);
        return std::nullopt;
      }
    }
    if (product > std::numeric_limits<int64_t>::max() / value) {
      *error = fmt::format("'{}' is more than fits in 64 bits", text);
      return std::nullopt;
    }
    product *= value;
    if (star == std::string_view::npos) return product;
    start = star + 1;
  }
}

}  // namespace gxc
