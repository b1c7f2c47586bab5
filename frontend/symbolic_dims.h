// Symbolic dimensions (format 1.1): names in input shapes, one value per name in a run.
//
// A name's value comes from the input files the run was given (`--input x=x.npy`: the size of
// x's dim where the model writes the name; two inputs that disagree are an error naming
// both), else from `--dim NAME=N`, else from the model's `dims:` default. A name none of these
// binds is an error listing every such name and where it appears. The model is then lowered
// with the bound sizes, so the IR after every pass, the generated kernels and the memory plan
// are those of this binding; the graph records it (its `dims` attribute), and the kernel
// cache keeps each binding's kernels apart because their text differs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/tensor_type.h"

namespace gxc {

// An input file given for the run: its path (for messages) and a way to read its shape,
// called only for inputs whose shape has names (a file is read once a model is known to need
// it, so the model's own errors come first).
struct GivenInput {
  std::string file;
  std::function<Shape()> shape;
  // `gxc train --data`: the input is an array of a data file (an .npz), not an --input file,
  // which is what messages about it say.
  bool fromDataFile = false;
  // Set when `shape` is one training batch's, dim 0 its samples: what sets that size
  // ("batch_size 64"). A fixed size the batch differs from is then an error at the model's
  // dim, before anything runs (an --input file's fixed sizes are checked with its dtype).
  std::string batchOrigin;
};

// One dim of an input's shape as the model file writes it.
struct DeclaredDim {
  int64_t size = 0;  // when `name` is empty
  std::string name;  // a symbolic dimension
  SourceLoc loc;
};

struct DeclaredInput {
  std::string name;
  std::vector<DeclaredDim> dims;
  SourceLoc loc;       // of its name
  SourceLoc shapeLoc;  // of its shape list
  bool symbolic() const;
};

// A `dims:` entry of the model file.
struct DimDefault {
  int64_t size = 0;
  SourceLoc loc;
};

class DimBinding {
 public:
  DimBinding() = default;
  // Binds every name the inputs use (see above). Errors: a name unbound (usage, exit 2), a
  // `--dim` or `dims:` name no input uses (usage / located model error), inputs that disagree
  // with each other or with `--dim` (model, at the file).
  static DimBinding bind(const std::vector<DeclaredInput>& inputs,
                         const std::map<std::string, DimDefault>& defaults,
                         const std::map<std::string, int64_t>& overrides,
                         const std::map<std::string, GivenInput>& given);

  bool empty() const { return values_.empty(); }
  std::optional<int64_t> find(std::string_view name) const;
  // The concrete shape of a declared input.
  Shape shapeOf(const DeclaredInput& input) const;
  // "batch=64, seq=16", the names sorted.
  std::string str() const;
  // A shape entry written as an integer, a name or a product ("batch*8", "batch*seq"):
  // its value, or nullopt with `error` saying why not.
  std::optional<int64_t> evaluate(std::string_view text, std::string* error) const;

 private:
  std::map<std::string, int64_t, std::less<>> values_;
};

// Whether `text` spells a symbolic dimension's name: [A-Za-z_][A-Za-z0-9_]*.
bool isDimName(std::string_view text);

}  // namespace gxc
