// gxc_kernel_numbers.h: the second part of gxc_kernel.h, what both compilers share after the
// platform sections: f16 and bf16 bit conversions, typed loads and stores, the integer folds,
// the orders argmax and topk pick by, and the elementwise functions. Not a header of its own:
// the build splices it into gxc_kernel.h where that file includes it (codegen/CMakeLists.txt),
// so NVRTC and the host compiler still get one self-contained header.
// IEEE binary16 and bfloat16, round to nearest even (as __float2half_rn and
// __float2bfloat16_rn round), so both compilers store the same bits.
GXC_FN unsigned short gxc_f32_to_f16(float value) {
  unsigned x = gxc_float_bits(value);
  unsigned sign = (x >> 16) & 0x8000u;
  unsigned absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or nan
    return (unsigned short)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds past the max
  if (absx < 0x38800000u) {                                          // a subnormal or zero result
    if (absx < 0x33000000u) return (unsigned short)sign;
    unsigned exponent = absx >> 23;
    unsigned mantissa = (absx & 0x7fffffu) | 0x800000u;
    unsigned shift = 126u - exponent;
    unsigned half = mantissa >> shift;
    unsigned rest = mantissa & ((1u << shift) - 1u);
    unsigned midpoint = 1u << (shift - 1u);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return (unsigned short)(sign | half);
  }
  unsigned rebased = absx - 0x38000000u;  // exponent bias 127 -> 15
  unsigned half = rebased >> 13;
  unsigned rest = rebased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return (unsigned short)(sign | half);
}

GXC_FN float gxc_f16_to_f32(unsigned short bits) {
  unsigned sign = (unsigned)(bits & 0x8000u) << 16;
  unsigned exponent = (bits >> 10) & 0x1fu;
  unsigned mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) return gxc_bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return gxc_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  float subnormal = (float)mantissa * 5.9604644775390625e-8f;  // mantissa * 2^-24, exact
  return sign ? -subnormal : subnormal;
}

GXC_FN unsigned short gxc_f32_to_bf16(float value) {
  unsigned x = gxc_float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}

GXC_FN float gxc_bf16_to_f32(unsigned short bits) { return gxc_bits_float((unsigned)bits << 16); }

// Typed loads and stores: f32, f16 and bf16 are computed in f32, f64 in double, i32 and i64 in
// 64-bit integers, bool (one byte, 0 or 1) as bool.
GXC_FN float gxc_ld_f32(const float* p, gxc_i64 i) { return p[i]; }
GXC_FN float gxc_ld_f16(const unsigned short* p, gxc_i64 i) { return gxc_f16_to_f32(p[i]); }
GXC_FN float gxc_ld_bf16(const unsigned short* p, gxc_i64 i) { return gxc_bf16_to_f32(p[i]); }
GXC_FN void gxc_st_f32(float* p, gxc_i64 i, float v) { p[i] = v; }
GXC_FN void gxc_st_f16(unsigned short* p, gxc_i64 i, float v) { p[i] = gxc_f32_to_f16(v); }
GXC_FN void gxc_st_bf16(unsigned short* p, gxc_i64 i, float v) { p[i] = gxc_f32_to_bf16(v); }
GXC_FN double gxc_ld_f64(const double* p, gxc_i64 i) { return p[i]; }
GXC_FN void gxc_st_f64(double* p, gxc_i64 i, double v) { p[i] = v; }
GXC_FN gxc_i64 gxc_ld_i32(const int* p, gxc_i64 i) { return p[i]; }
GXC_FN void gxc_st_i32(int* p, gxc_i64 i, gxc_i64 v) { p[i] = (int)v; }
GXC_FN gxc_i64 gxc_ld_i64(const long long* p, gxc_i64 i) { return p[i]; }
GXC_FN void gxc_st_i64(long long* p, gxc_i64 i, gxc_i64 v) { p[i] = v; }
GXC_FN bool gxc_ld_bool(const unsigned char* p, gxc_i64 i) { return p[i] != 0; }
GXC_FN void gxc_st_bool(unsigned char* p, gxc_i64 i, bool v) { p[i] = v ? 1 : 0; }
// A number as the f16 or bf16 nearest it, for comparisons in that dtype (as torch compares
// an f16 tensor with a Python number).
GXC_FN float gxc_round_f16(float v) { return gxc_f16_to_f32(gxc_f32_to_f16(v)); }
GXC_FN float gxc_round_bf16(float v) { return gxc_bf16_to_f32(gxc_f32_to_bf16(v)); }

GXC_FN float gxc_neg_inf() { return gxc_bits_float(0xff800000u); }
GXC_FN float gxc_nan() { return gxc_bits_float(0x7fc00000u); }

// The integer reductions' step, kind 0 sum, 1 product, 2 max, 3 min: sums and products wrap
// around as two's complement (through gxc_u64: signed overflow is undefined), as torch's.
GXC_FN gxc_i64 gxc_fold_i64(gxc_i64 a, gxc_i64 b, int kind) {
  if (kind == 0) return (gxc_i64)((gxc_u64)a + (gxc_u64)b);
  if (kind == 1) return (gxc_i64)((gxc_u64)a * (gxc_u64)b);
  if (kind == 2) return a > b ? a : b;
  return a < b ? a : b;
}
GXC_FN gxc_i64 gxc_fold_i64_identity(int kind) {
  if (kind == 2) return (gxc_i64)(1ULL << 63);  // the minimum
  if (kind == 3) return (gxc_i64) ~(1ULL << 63);
  return kind;  // 0 sums, 1 multiplies
}

// Whether element (bv, bi) beats (av, ai) for argmax (largest) or argmin, as torch picks: a NaN
// beats every number, and of equals (NaNs included) the first wins; index -1 is no element.
// For float and double.
template <typename T>
GXC_FN bool gxc_arg_better(T bv, gxc_i64 bi, T av, gxc_i64 ai, bool largest) {
  if (bi < 0) return false;
  if (ai < 0) return true;
  bool bnan = bv != bv, anan = av != av;
  if (bnan || anan) return bnan && (!anan || bi < ai);
  if (bv == av) return bi < ai;
  return largest ? bv > av : bv < av;
}

// Whether element (a, ia) comes strictly before (b, ib) in the order torch.topk gives its
// results: descending with `largest`, else ascending; a NaN counts as larger than every number
// (first, or last); of equals (NaNs included) the lower index first. A strict total order on
// the positions of a line, so the k-th pick is the first element after the (k-1)-th. For
// float, double and gxc_i64 (integers have no NaN: a != a is false).
template <typename T>
GXC_FN bool gxc_topk_before(T a, gxc_i64 ia, T b, gxc_i64 ib, bool largest) {
  bool anan = a != a, bnan = b != b;
  if (anan || bnan) return anan && bnan ? ia < ib : (largest ? anan : bnan);
  if (a == b) return ia < ib;
  return largest ? a > b : a < b;
}

// The elementwise functions, written as the reference interpreter writes them.
// Training dropout's mask (the dropout op with a step count): element `index` of the mask drawn
// for `seed` at `step` is kept when the top 24 bits of splitmix64's output number index + 1,
// from a key mixed from the seed and the step, are at least `threshold` = p * 2^24. Integer
// arithmetic only, so the host and the GPU keep the same elements (runtime/reference has its
// own copy of this rule, and a test compares them).
GXC_FN gxc_u64 gxc_mix64(gxc_u64 z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
GXC_FN bool gxc_dropout_keep(gxc_u64 seed, gxc_u64 step, gxc_u64 index, gxc_u64 threshold) {
  const gxc_u64 gamma = 0x9e3779b97f4a7c15ull;
  gxc_u64 key = gxc_mix64(seed ^ gxc_mix64(step ^ gamma));
  return (gxc_mix64(key + (index + 1ull) * gamma) >> 40) >= threshold;
}

// NaN and -0 stay, as torch.relu (a clamp_min(0)): `x > 0 ? x : 0` would make NaN 0.
GXC_FN float gxc_relu(float x) { return x < 0.0f ? 0.0f : x; }
GXC_FN float gxc_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
GXC_FN float gxc_gelu(float x) { return 0.5f * x * (1.0f + erff(x / 1.41421356237309504880f)); }
GXC_FN float gxc_gelu_tanh(float x) {
  const float k = sqrtf(2.0f / 3.14159265358979323846f);
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}
// ATen's forms, where the order of operations changes a float result.
GXC_FN float gxc_sign(float x) { return (float)((0.0f < x) - (x < 0.0f)); }
GXC_FN float gxc_silu(float x) { return x / (1.0f + expf(-x)); }
GXC_FN float gxc_relu6(float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); }
GXC_FN float gxc_hardsigmoid(float x) { return gxc_relu6(x + 3.0f) / 6.0f; }
GXC_FN float gxc_hardswish(float x) { return x * gxc_relu6(x + 3.0f) / 6.0f; }
GXC_FN float gxc_leaky_relu(float x, float slope) { return x > 0.0f ? x : x * slope; }
GXC_FN float gxc_elu(float x, float alpha) { return x > 0.0f ? x : alpha * expm1f(x); }
// NaN if either is, as torch.minimum and torch.maximum (fminf and fmaxf drop it).
GXC_FN float gxc_minimum(float a, float b) {
  return a != a || b != b ? gxc_nan() : (a < b ? a : b);
}
GXC_FN float gxc_maximum(float a, float b) {
  return a != a || b != b ? gxc_nan() : (a > b ? a : b);
}
// torch.pow: powf for a tensor exponent; for a number (the `scalar` attribute), torch's sqrt and
// rsqrt where it is 0.5 or -0.5 (NaN at -inf, where powf gives +inf, and -0 at -0).
GXC_FN float gxc_pow(float x, float e, bool number) {
  if (number && e == 0.5f) return sqrtf(x);
  return number && e == -0.5f ? 1.0f / sqrtf(x) : powf(x, e);
}
GXC_FN float gxc_clamp_lo(float x, float lo) { return x < lo ? lo : x; }
GXC_FN float gxc_clamp_hi(float x, float hi) { return x > hi ? hi : x; }
GXC_FN float gxc_softplus(float x, float beta, float threshold) {
  return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}

// The same in double, for f64 (the reference computes f64 in double too).
GXC_FN double gxc_relu(double x) { return x < 0.0 ? 0.0 : x; }
GXC_FN double gxc_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
GXC_FN double gxc_gelu(double x) { return 0.5 * x * (1.0 + erf(x / 1.41421356237309504880)); }
GXC_FN double gxc_gelu_tanh(double x) {
  const double k = sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}
GXC_FN double gxc_sign(double x) { return (double)((0.0 < x) - (x < 0.0)); }
GXC_FN double gxc_silu(double x) { return x / (1.0 + exp(-x)); }
GXC_FN double gxc_relu6(double x) { return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x); }
GXC_FN double gxc_hardsigmoid(double x) { return gxc_relu6(x + 3.0) / 6.0; }
GXC_FN double gxc_hardswish(double x) { return x * gxc_relu6(x + 3.0) / 6.0; }
GXC_FN double gxc_leaky_relu(double x, double slope) { return x > 0.0 ? x : x * slope; }
GXC_FN double gxc_elu(double x, double alpha) { return x > 0.0 ? x : alpha * expm1(x); }
GXC_FN double gxc_minimum(double a, double b) {
  return a != a || b != b ? (double)gxc_nan() : (a < b ? a : b);
}
GXC_FN double gxc_maximum(double a, double b) {
  return a != a || b != b ? (double)gxc_nan() : (a > b ? a : b);
}
GXC_FN double gxc_pow(double x, double e, bool number) {
  if (number && e == 0.5) return sqrt(x);
  return number && e == -0.5 ? 1.0 / sqrt(x) : pow(x, e);
}
GXC_FN double gxc_clamp_lo(double x, double lo) { return x < lo ? lo : x; }
GXC_FN double gxc_clamp_hi(double x, double hi) { return x > hi ? hi : x; }
GXC_FN double gxc_softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : log1p(exp(x * beta)) / beta;
}
