// The op cases of tests/fixtures/ops.json (written by make_op_fixtures.py: f32 in NumPy, f16 and
// bf16 by PyTorch), shared by the tests that run them: reference_ops_test.cpp (the interpreter
// alone), cpu_ops_test.cpp (the whole host path), generated_kernel_fixtures_test.cpp and
// cuda_platform_test.cpp (through op_fixture_graph.h), so all read a case the same way.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/attributes.h"
#include "ir/tensor_type.h"
#include "tensor/tensor.h"

namespace gxc::fixtures {

struct FixtureTensor {
  DType dtype = DType::F32;
  Shape shape;
  nlohmann::json data;  // numbers, as written by the generator
};

struct OpCase {
  std::string name;
  std::string op;
  nlohmann::json attrs;
  std::vector<FixtureTensor> inputs;
  FixtureTensor expected;
};

// gtest names a failing parameter by this rather than by its bytes.
void PrintTo(const OpCase& c, std::ostream* out);

// Every case of ops.json, read once; empty when the file is missing (the coverage tests of
// reference_ops_test.cpp report that).
const std::vector<OpCase>& allOpCases();

// JSON's number kinds map onto the attribute kinds: true/false, 2, 2.5, "tanh", [0, -1].
Attrs toAttrs(const nlohmann::json& attrs);
Tensor toTensor(const FixtureTensor& t);

// The tolerance of one expected element: 1e-5 relative (absolute below 1) for f32, since
// results are computed in double and rounded once; one unit in the last place of the stored
// precision for f16 and bf16 (tighter than docs/architecture.md's 1e-2): PyTorch computed
// them in f32 and rounded once, as gxc does, so rounding the result is the whole error.
double fixtureTolerance(DType dtype, double expected);

// Checks dtype, shape and every element of `got` against `want` with fixtureTolerance
// (integers exactly), as gtest failures.
void expectMatchesFixture(const Tensor& got, const FixtureTensor& want);

// Checks `got` against the reference interpreter's `want`, as gtest failures prefixed `what`:
// integers and bools exactly, NaN and inf as themselves, floats within 1e-5 relative (absolute
// below 1) for f32 and 1e-2 otherwise.
void expectCloseToReference(const Tensor& got, const Tensor& want, const std::string& what);

}  // namespace gxc::fixtures
