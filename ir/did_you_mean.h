// "Did you mean ...?" for a misspelt name: the closest valid name, when one is close enough to
// be what was meant. Used for unknown ops, keys, dtypes and command-line options alike, so that
// they all judge "close" the same way.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gxc {

// The number of edits (insert, delete, replace, or swap two neighbours) from `a` to `b`,
// comparing letters without case and ignoring '_' and '-': "Conv2d" is "conv2d" and
// "batchnorm" is "batch_norm" at distance 0.
size_t spellingDistance(std::string_view a, std::string_view b);

// The name in `names` closest to `given`, when it is at most max(1, L/4) edits away, L being
// the length of `given` without '_' and '-' ("BatchNorm2d" -> "batch_norm", "--device" ->
// "--devices"; "f8" is not taken for "f16", "outputs" for "inputs", nor "convolution" for
// "conv2d"). Ties go to the earlier name.
std::optional<std::string_view> closestName(std::string_view given,
                                            std::span<const std::string_view> names);

// " (did you mean 'NAME'?)" for the closest name, or "" when none is close.
std::string didYouMean(std::string_view given, std::span<const std::string_view> names);

// What follows "unknown dtype 'NAME'" in a message: " (did you mean 'f64'?)" for a near miss
// or PyTorch's spelling of a gxc dtype ("float64", "torch.long"), else the list of dtypes.
std::string unknownDTypeHint(std::string_view name);

// What follows "unknown op 'NAME'" in a message: " (did you mean 'batch_norm'?)" when a model op
// is spelt close to NAME, else where the ops are listed (a list of ninety names is no help).
std::string unknownOpHint(std::string_view name);

}  // namespace gxc
