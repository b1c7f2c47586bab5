#include "ir/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/dtype.h"
#include "ir/op_kinds.h"

namespace gxc {
namespace {

// What a spelling is compared on: lower case, without the separators people vary most.
std::string normalized(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance (Damerau-Levenshtein without moving a letter twice).
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t replace = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

size_t spellingDistance(std::string_view a, std::string_view b) {
  return editDistance(normalized(a), normalized(b));
}

std::optional<std::string_view> closestName(std::string_view given,
                                            std::span<const std::string_view> names) {
  // A quarter of the letters: one slip in a short name, more in a long one, but no guess
  // between short names of similar shape ("f8", NumPy's float64, is 2 from "f16").
  size_t limit = std::max<size_t>(1, normalized(given).size() / 4);
  std::optional<std::string_view> best;
  size_t bestDistance = limit + 1;
  for (std::string_view name : names) {
    size_t distance = spellingDistance(given, name);
    if (distance < bestDistance) best = name, bestDistance = distance;
  }
  return best;
}

std::string didYouMean(std::string_view given, std::span<const std::string_view> names) {
  std::optional<std::string_view> closest = closestName(given, names);
  return closest ? fmt::format(" (did you mean '{}'?)", *closest) : std::string();
}

std::string unknownDTypeHint(std::string_view name) {
  // PyTorch users write torch's names; they are too far from gxc's for spelling to find them.
  static constexpr std::pair<std::string_view, DType> kTorchNames[] = {
      {"float32", DType::F32},   {"float", DType::F32},   {"float64", DType::F64},
      {"double", DType::F64},    {"float16", DType::F16}, {"half", DType::F16},
      {"bfloat16", DType::BF16}, {"int32", DType::I32},   {"int", DType::I32},
      {"int64", DType::I64},     {"long", DType::I64}};
  size_t dot = name.rfind('.');  // torch.float64
  std::string_view bare = dot == std::string_view::npos ? name : name.substr(dot + 1);
  for (const auto& [torchName, dtype] : kTorchNames)
    if (bare == torchName) return fmt::format(" (did you mean '{}'?)", dtypeName(dtype));
  static constexpr std::string_view kNames[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "bool"};
  std::string hint = didYouMean(bare, kNames);
  return hint.empty() ? " (f32, f64, f16, bf16, i32, i64, bool)" : hint;
}

std::string unknownOpHint(std::string_view name) {
  std::string hint = didYouMean(name, modelOpNames());
  return hint.empty() ? " (the ops are listed in docs/model-format.md, \"Ops\")" : hint;
}

}  // namespace gxc
