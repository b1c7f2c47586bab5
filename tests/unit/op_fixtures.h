// The op cases of tests/fixtures/ops.json (written by make_op_fixtures.py: f32 in NumPy, f16 and
// bf16 by PyTorch), shared by the tests that run them: reference_ops_test.cpp (the interpreter
// alone), cpu_ops_test.cpp (the whole host path), generated_kernel_fixtures_test.cpp and
// cuda_platform_test.cpp (through op_fixture_graph.h), so all read a case the same way.
#pragma once

#include <cmath>
#include <ostream>
#include <span>
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

// numpy.allclose's test, |got - expected| <= atol + rtol * |expected|: a relative term that
// holds results of every magnitude to the same number of significant digits, and an absolute
// term, stated on its own, for results near 0 whose error is set by the magnitude of the values
// that cancelled to make them rather than by their own.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double bound(double expected) const { return atol + rtol * std::abs(expected); }
};

// f32: the reference computes in double and rounds once; generated kernels and the host
// libraries compute in float, so each step adds up to an ulp (2^-23 of 1, 1.2e-7): 1e-5 is
// about 84 ulp, room for a reduction's or a transcendental's few. The absolute term is the f32
// roundoff of order-1 values that cancel to a result near 0 (a dot product of mixed signs, x
// minus its mean, 1 + tanh(x) for very negative x): two ulp of 1, where the most any case of
// order-1 values needs beyond the relative term is 5.3e-8 (conv_transpose2d_3x3's generated
// kernel against the reference). Cases that cancel larger values say so in caseTolerance.
inline constexpr Tolerance kF32Tolerance{0x1p-22, 1e-5};
// f64: computed in double everywhere, so double's roundoff (2^-53, 1.1e-16) for f32's: 1e-12
// relative is about 4500 ulp; the absolute term, as f32's, two ulp of 1.
inline constexpr Tolerance kF64Tolerance{0x1p-51, 1e-12};
// f16 and bf16 against the reference: docs/architecture.md's 1e-2 (bf16's ulp, 2^-7, with room
// for the extra rounding a fused kernel's stored member takes or skips), relative only: every
// f16 and bf16 result of ops.json, near 0 or not, is within 1e-2 of its own magnitude.
inline constexpr Tolerance kHalfReferenceTolerance{0, 1e-2};

// An f32 case of ops.json (or a model) whose results are small differences of larger values,
// with the absolute term their roundoff needs beside kF32Tolerance's relative one.
struct WiderAbsoluteTerm {
  const char* name;
  double atol;
};
// kF32Tolerance, with the absolute term `terms` gives `name`, if any.
Tolerance f32ToleranceFor(std::span<const WiderAbsoluteTerm> terms, const std::string& name);

// The tolerance of the f32 and f64 elements of the ops.json case `caseName` (empty: none in
// particular): kF32Tolerance and kF64Tolerance, with a larger absolute term for the few cases
// whose results are small differences of larger values (op_fixtures.cpp says why for each).
Tolerance caseTolerance(const std::string& caseName, DType dtype);

// The bound on one expected element of ops.json: caseTolerance's for f32 and f64; one unit in
// the last place of the stored precision for f16 and bf16 (tighter than docs/architecture.md's
// 1e-2): PyTorch computed them in f32 and rounded once, as gxc does, so rounding the result is
// the whole error.
double fixtureTolerance(DType dtype, double expected, const std::string& caseName = "");

// Checks dtype, shape and every element of `got` against `want` with fixtureTolerance
// (integers exactly, NaN and inf as themselves), as gtest failures.
void expectMatchesFixture(const Tensor& got, const FixtureTensor& want,
                          const std::string& caseName = "");

// Checks `got` against the reference interpreter's `want`, as gtest failures prefixed `what`:
// integers and bools exactly, NaN and inf as themselves, f32 and f64 with caseTolerance, f16
// and bf16 with kHalfReferenceTolerance.
void expectCloseToReference(const Tensor& got, const Tensor& want, const std::string& what,
                            const std::string& caseName = "");

}  // namespace gxc::fixtures
