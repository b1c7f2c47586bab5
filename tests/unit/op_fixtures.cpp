// Reading tests/fixtures/ops.json and comparing results with it (see op_fixtures.h).
#include "tests/unit/op_fixtures.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

namespace gxc::fixtures {
namespace {

using nlohmann::json;

FixtureTensor readTensor(const json& j) {
  auto dtype = parseDType(j.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype " + j.at("dtype").dump());
  return {*dtype, j.at("shape").get<Shape>(), j.at("data")};
}

std::vector<OpCase> loadCases() {
  std::ifstream file(std::string(GXC_FIXTURE_DIR) + "/ops.json");
  if (!file) return {};
  json root = json::parse(file);
  std::vector<OpCase> cases;
  for (const json& c : root.at("cases")) {
    OpCase opCase{c.at("name").get<std::string>(),
                  c.at("op").get<std::string>(),
                  c.at("attrs"),
                  {},
                  readTensor(c.at("expected"))};
    for (const json& input : c.at("inputs")) opCase.inputs.push_back(readTensor(input));
    cases.push_back(std::move(opCase));
  }
  return cases;
}

// One unit in the last place of `expected` in the stored precision (10 or 7 mantissa bits),
// no finer than the dtype's smallest subnormal.
double unitInLastPlace(DType dtype, double expected) {
  int mantissaBits = dtype == DType::F16 ? 10 : 7;
  double smallest = dtype == DType::F16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -133);
  int exponent = 0;
  std::frexp(expected, &exponent);  // expected = f * 2^exponent, 0.5 <= |f| < 1
  return std::max(std::ldexp(1.0, exponent - 1 - mantissaBits), smallest);
}

// The f32 cases whose results are small differences of values well beyond 1, so that their
// error is the roundoff of those values rather than of the result, each with the absolute term
// that roundoff needs.
constexpr WiderAbsoluteTerm kCancellingCases[] = {
    // x - logsumexp(x) of inputs near -500 (to -540): the f32 logsumexp is off by up to half
    // an ulp of 512, 2^-15 (the cpu platform's result of -2.2e-16 is off by 1.4e-6).
    {"log_softmax_large_values", 0x1p-15},
    // x - mean of inputs 5 + N(0, 1) (up to 6.7): one ulp of 8, 2^-20 (the cpu platform's
    // result of 0.078 is off by 9.5e-7, 1.7e-7 beyond the relative term).
    {"layer_norm_3d_offset", 0x1p-20},
    // 27 products of values up to 2.9 summed (with a bias) to results near 0: four ulp of 1,
    // 2^-21 (the generated kernel's result of 0.024 is off by 5.1e-7, 2.7e-7 beyond the
    // relative term).
    {"conv2d_3x3", 0x1p-21},
};

}  // namespace

void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

const std::vector<OpCase>& allOpCases() {
  static const std::vector<OpCase> cases = loadCases();
  return cases;
}

Attrs toAttrs(const json& j) {
  Attrs attrs;
  for (const auto& [name, value] : j.items()) {
    if (value.is_boolean())
      attrs.set(name, value.get<bool>());
    else if (value.is_number_integer())
      attrs.set(name, value.get<int64_t>());
    else if (value.is_number_float())
      attrs.set(name, value.get<double>());
    else if (value.is_string())
      attrs.set(name, value.get<std::string>());
    else if (value.is_array())
      attrs.set(name, value.get<std::vector<int64_t>>());
    else
      throw std::runtime_error("attribute '" + name + "' of unsupported JSON kind");
  }
  return attrs;
}

// A float element: a JSON number, or "nan", "inf", "-inf" (which JSON has no numbers for).
double floatElement(const json& j) {
  if (!j.is_string()) return j.get<double>();
  const std::string& text = j.get_ref<const std::string&>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::runtime_error("float element " + j.dump() + " is neither a number nor nan/inf");
}

// A bool element: true/false, or 0/1.
bool boolElement(const json& j) {
  if (j.is_boolean()) return j.get<bool>();
  int64_t value = j.get<int64_t>();
  if (value != 0 && value != 1) throw std::runtime_error("bool element " + j.dump());
  return value == 1;
}

Tensor toTensor(const FixtureTensor& t) {
  Tensor tensor(t.dtype, t.shape);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    // Integers are read as integers so that i64 values beyond 2^53 stay exact.
    if (isInteger(t.dtype))
      tensor.storeInt(i, t.data.at(i).get<int64_t>());
    else if (t.dtype == DType::Bool)
      tensor.storeInt(i, boolElement(t.data.at(i)));
    else if (t.dtype == DType::F64)
      tensor.storeDouble(i, floatElement(t.data.at(i)));
    else  // the f32 nearest, then the dtype's rounding: the values are the dtype's already
      tensor.storeFloat(i, static_cast<float>(floatElement(t.data.at(i))));
  }
  return tensor;
}

Tolerance f32ToleranceFor(std::span<const WiderAbsoluteTerm> terms, const std::string& name) {
  for (const WiderAbsoluteTerm& term : terms)
    if (name == term.name) return {term.atol, kF32Tolerance.rtol};
  return kF32Tolerance;
}

Tolerance caseTolerance(const std::string& caseName, DType dtype) {
  if (dtype == DType::F64) return kF64Tolerance;
  return f32ToleranceFor(kCancellingCases, caseName);
}

double fixtureTolerance(DType dtype, double expected, const std::string& caseName) {
  if (dtype == DType::F32 || dtype == DType::F64)
    return caseTolerance(caseName, dtype).bound(expected);
  return unitInLastPlace(dtype, expected);
}

void expectMatchesFixture(const Tensor& got, const FixtureTensor& want,
                          const std::string& caseName) {
  ASSERT_EQ(got.dtype(), want.dtype);
  ASSERT_EQ(got.shape(), want.shape);
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (isInteger(want.dtype)) {
      EXPECT_EQ(got.loadInt(i), want.data.at(i).get<int64_t>()) << "element " << i;
      continue;
    }
    if (want.dtype == DType::Bool) {  // exact
      EXPECT_EQ(got.loadInt(i) != 0, boolElement(want.data.at(i))) << "element " << i;
      continue;
    }
    double expected = floatElement(want.data.at(i));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got.loadDouble(i))) << "element " << i << " is not NaN";
      continue;
    }
    if (std::isinf(expected)) {
      EXPECT_EQ(got.loadDouble(i), expected) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got.loadDouble(i), expected, fixtureTolerance(want.dtype, expected, caseName))
        << "element " << i;
  }
}

void expectCloseToReference(const Tensor& got, const Tensor& want, const std::string& what,
                            const std::string& caseName) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const bool half = want.dtype() == DType::F16 || want.dtype() == DType::BF16;
  const Tolerance tolerance =
      half ? kHalfReferenceTolerance : caseTolerance(caseName, want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (isInteger(want.dtype()) || want.dtype() == DType::Bool) {  // exact
      EXPECT_EQ(got.loadInt(i), want.loadInt(i)) << what << "element " << i;
      continue;
    }
    double expected = want.loadDouble(i);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got.loadDouble(i))) << what << "element " << i << " is not NaN";
      continue;
    }
    if (std::isinf(expected)) {
      EXPECT_EQ(got.loadDouble(i), expected) << what << "element " << i;
      continue;
    }
    EXPECT_NEAR(got.loadDouble(i), expected, tolerance.bound(expected)) << what << "element " << i;
  }
}

}  // namespace gxc::fixtures
