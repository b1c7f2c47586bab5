// Fused kernels, written by hand in the IR as the fuse pass writes them (members carry the
// same `kernel` attribute, the root last), run through the generated CUDA C++ on the host:
// on the `cpu` platform (HostExecutor) and on one virtual GPU (SimExecutor), each against the
// reference interpreter on the same graph, which computes the members op by op. Each fused
// group must be ONE kernel in the translation unit.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "codegen/cuda_source.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/host/host_executor.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

struct FusionCase {
  std::string name;
  std::string ir;       // on the host; kernel "k0" is the fused group under test
  size_t fusedOps = 0;  // members of k0
  double tolerance = 1e-5;
};

void PrintTo(const FusionCase& c, std::ostream* out) { *out << c.name; }

std::vector<FusionCase> cases() {
  return {
      {"elementwise_chain", R"(
graph @chain(%x: f32[4,8] @cpu, %y: f32[4,8] @cpu) -> (r) {
  %a = mul %x {kernel = "k0", scalar = 0.5} : f32[4,8] @cpu
  %b = add %a, %y {kernel = "k0"} : f32[4,8] @cpu
  %c = relu %b {kernel = "k0"} : f32[4,8] @cpu
  %r = sigmoid %c {kernel = "k0"} : f32[4,8] @cpu
  return %r
})",
       4},
      {"broadcast_tree", R"(
graph @tree(%a: f32[3,1,8] @cpu, %b: f32[5,1] @cpu, %c: f32[8] @cpu) -> (r) {
  %t1 = mul %a, %b {kernel = "k0"} : f32[3,5,8] @cpu
  %t2 = sub %c {kernel = "k0", scalar = 2} : f32[8] @cpu
  %t3 = exp %t2 {kernel = "k0"} : f32[8] @cpu
  %t4 = div %t1, %t3 {kernel = "k0"} : f32[3,5,8] @cpu
  %r = tanh %t4 {kernel = "k0"} : f32[3,5,8] @cpu
  return %r
})",
       5},
      {"mean_keepdim_then_centered_square", R"(
graph @center(%x: f32[6,10] @cpu) -> (r) {
  %m = mean %x {axis = 1, keepdim = true, kernel = "k0"} : f32[6,1] @cpu
  %d = sub %x, %m {kernel = "k0"} : f32[6,10] @cpu
  %r = mul %d, %d {kernel = "k0"} : f32[6,10] @cpu
  return %r
})",
       3},
      {"sum_all_then_scale", R"(
graph @total(%x: f32[3,4,5] @cpu) -> (r) {
  %s = sum %x {kernel = "k0"} : f32[] @cpu
  %r = mul %s {kernel = "k0", scalar = 0.25} : f32[] @cpu
  return %r
})",
       2},
      {"max_axes_then_exp", R"(
graph @maxexp(%x: f32[4,5,6] @cpu, %y: f32[5] @cpu) -> (r) {
  %m = max %x {axis = [0, 2], kernel = "k0"} : f32[5] @cpu
  %e = sub %m, %y {kernel = "k0"} : f32[5] @cpu
  %r = exp %e {kernel = "k0"} : f32[5] @cpu
  return %r
})",
       3},
      {"softmax_middle_axis_then_mul", R"(
graph @soft(%x: f32[2,3,7] @cpu, %y: f32[3,1] @cpu) -> (r) {
  %s = softmax %x {axis = 1, kernel = "k0"} : f32[2,3,7] @cpu
  %r = mul %s, %y {kernel = "k0"} : f32[2,3,7] @cpu
  return %r
})",
       2},
      {"softmax_into_a_larger_root", R"(
graph @soft_big(%x: f32[4,6] @cpu, %z: f32[3,4,6] @cpu) -> (r) {
  %s = softmax %x {kernel = "k0"} : f32[4,6] @cpu
  %r = add %s, %z {kernel = "k0"} : f32[3,4,6] @cpu
  return %r
})",
       2},
      {"log_softmax_then_neg", R"(
graph @logsoft(%x: f32[5,9] @cpu) -> (r) {
  %s = log_softmax %x {axis = -1, kernel = "k0"} : f32[5,9] @cpu
  %r = neg %s {kernel = "k0"} : f32[5,9] @cpu
  return %r
})",
       2},
      {"layer_norm_then_gelu_and_residual", R"(
graph @ln(%x: f32[4,16] @cpu, %w: f32[16] @cpu, %b: f32[16] @cpu) -> (r) {
  %n = layer_norm %x, %w, %b {eps = 0.001, kernel = "k0"} : f32[4,16] @cpu
  %g = gelu %n {kernel = "k0"} : f32[4,16] @cpu
  %r = add %g, %x {kernel = "k0"} : f32[4,16] @cpu
  return %r
})",
       3},
      // The format 1.1 reductions and norms as anchors, with a prologue and a tail.
      {"exp_then_min_prod_of_rows", R"(
graph @minprod(%x: f32[4,6,5] @cpu, %y: f32[6] @cpu) -> (r) {
  %e = mul %x {kernel = "k0", scalar = 0.5} : f32[4,6,5] @cpu
  %m = min %e {axis = [0, -1], kernel = "k0"} : f32[6] @cpu
  %r = sub %m, %y {kernel = "k0"} : f32[6] @cpu
  return %r
})",
       3},
      {"prod_keepdim_then_centered", R"(
graph @prod(%x: f32[3,7] @cpu) -> (r) {
  %a = tanh %x {kernel = "k0"} : f32[3,7] @cpu
  %p = prod %a {axis = 1, keepdim = true, kernel = "k0"} : f32[3,1] @cpu
  %r = sub %x, %p {kernel = "k0"} : f32[3,7] @cpu
  return %r
})",
       3},
      {"logsumexp_into_a_larger_root", R"(
graph @lse(%x: f32[5,9] @cpu) -> (r) {
  %s = mul %x {kernel = "k0", scalar = 3.0} : f32[5,9] @cpu
  %l = logsumexp %s {axis = -1, keepdim = true, kernel = "k0"} : f32[5,1] @cpu
  %r = sub %s, %l {kernel = "k0"} : f32[5,9] @cpu
  return %r
})",
       3},
      {"var_and_std_tails", R"(
graph @var(%x: f32[4,3,8] @cpu) -> (r) {
  %v = var %x {axis = [0, 2], correction = 0, kernel = "k0"} : f32[3] @cpu
  %r = sqrt %v {kernel = "k0"} : f32[3] @cpu
  return %r
})",
       2},
      {"std_then_reciprocal", R"(
graph @std(%x: f32[6,10] @cpu) -> (r) {
  %a = add %x, %x {kernel = "k0"} : f32[6,10] @cpu
  %s = std %a {axis = 1, kernel = "k0"} : f32[6] @cpu
  %r = reciprocal %s {kernel = "k0"} : f32[6] @cpu
  return %r
})",
       3},
      {"rms_norm_over_two_dims_then_residual", R"(
graph @rms(%x: f32[3,4,8] @cpu, %w: f32[4,8] @cpu) -> (r) {
  %n = rms_norm %x, %w {eps = 1e-06, kernel = "k0", normalized_shape = [4, 8]} : f32[3,4,8] @cpu
  %r = add %n, %x {kernel = "k0"} : f32[3,4,8] @cpu
  return %r
})",
       2},
      {"gelu_then_group_norm_then_relu", R"(
graph @gn(%x: f32[2,6,5] @cpu, %w: f32[6] @cpu, %b: f32[6] @cpu) -> (r) {
  %g = gelu %x {kernel = "k0"} : f32[2,6,5] @cpu
  %n = group_norm %g, %w, %b {kernel = "k0", num_channels = 6, num_groups = 3} : f32[2,6,5] @cpu
  %r = relu %n {kernel = "k0"} : f32[2,6,5] @cpu
  return %r
})",
       3},
      // batch_norm is elementwise with per-channel params: read at the element's channel (dim
      // 1 of its result), while the tail reads the same running mean broadcast the NumPy way
      // (over the last dim, of the same size as the channels here).
      {"add_then_batch_norm_then_relu", R"(
graph @bn(%x: f32[2,4,4] @cpu, %y: f32[4] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[4] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[4] @cpu
  %w = param {init = "normal", name = "w", seed = 5} : f32[4] @cpu
  %b = param {init = "normal", name = "b", seed = 5} : f32[4] @cpu
  %s = add %x, %y {kernel = "k0"} : f32[2,4,4] @cpu
  %n = batch_norm %s, %m, %v, %w, %b {kernel = "k0", num_features = 4} : f32[2,4,4] @cpu
  %t = relu %n {kernel = "k0"} : f32[2,4,4] @cpu
  %r = add %t, %m {kernel = "k0"} : f32[2,4,4] @cpu
  return %r
})",
       4},
      // A 2-D batch_norm broadcast into a larger root: its channel is the root's last dim.
      {"batch_norm_broadcast_into_root", R"(
graph @bnb(%x: f32[4,3] @cpu, %z: f32[2,4,3] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[3] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[3] @cpu
  %n = batch_norm %x, %m, %v {affine = false, eps = 0.01, kernel = "k0", num_features = 3} : f32[4,3] @cpu
  %r = mul %n, %z {kernel = "k0"} : f32[2,4,3] @cpu
  return %r
})",
       2},
      // From kHostSimdElements on, a loop whose reads broadcast runs in runs of the root's last
      // dims (codegen's InnerRuns): batch_norm's channel and the residual as resnet has them.
      {"batch_norm_add_relu_in_runs", R"(
graph @bnr(%x: f32[2,8,32,32] @cpu, %y: f32[2,8,32,32] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[8] @cpu
  %w = param {init = "normal", name = "w", seed = 5} : f32[8] @cpu
  %b = param {init = "normal", name = "b", seed = 5} : f32[8] @cpu
  %n = batch_norm %x, %m, %v, %w, %b {kernel = "k0", num_features = 8} : f32[2,8,32,32] @cpu
  %s = add %n, %y {kernel = "k0"} : f32[2,8,32,32] @cpu
  %r = relu %s {kernel = "k0"} : f32[2,8,32,32] @cpu
  return %r
})",
       3},
      // The same running mean read per channel (an outer coordinate) and broadcast over the
      // last dim (the offset in a run).
      {"channel_and_broadcast_reads_in_runs", R"(
graph @bnc(%x: f32[16,32,32] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[32] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[32] @cpu
  %n = batch_norm %x, %m, %v {affine = false, kernel = "k0", num_features = 32} : f32[16,32,32] @cpu
  %r = sub %n, %m {kernel = "k0"} : f32[16,32,32] @cpu
  return %r
})",
       2},
      // A bias over the rows spans a run, a per-row scale is fixed over it.
      {"bias_and_row_scale_in_runs", R"(
graph @rows(%x: f32[32,512] @cpu, %bias: f32[512] @cpu, %s: f32[32,1] @cpu) -> (r) {
  %a = add %x, %bias {kernel = "k0"} : f32[32,512] @cpu
  %b = mul %a, %s {kernel = "k0"} : f32[32,512] @cpu
  %r = tanh %b {kernel = "k0"} : f32[32,512] @cpu
  return %r
})",
       3},
      // Rows shorter than a vector stay one flat loop.
      {"short_rows_stay_flat", R"(
graph @short(%x: f32[2048,8] @cpu, %bias: f32[8] @cpu) -> (r) {
  %a = add %x, %bias {kernel = "k0"} : f32[2048,8] @cpu
  %r = relu %a {kernel = "k0"} : f32[2048,8] @cpu
  return %r
})",
       2},
      // Attention's scores scaled, plus a mask of [batch, 1, 1, keys]: a read at an index made
      // of two coordinates, in a flat loop (no run of inner dims spans the mask).
      {"mask_read_at_two_coordinates", R"(
graph @mask(%x: f32[8,2,32,32] @cpu, %mask: f32[8,1,1,32] @cpu) -> (r) {
  %s = div %x {kernel = "k0", scalar = 4.0} : f32[8,2,32,32] @cpu
  %r = add %s, %mask {kernel = "k0"} : f32[8,2,32,32] @cpu
  return %r
})",
       2},
      // batch_norm in a row anchor's prologue, evaluated wherever softmax reads its input.
      {"batch_norm_then_softmax", R"(
graph @bns(%x: f32[3,5,6] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[5] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[5] @cpu
  %w = param {init = "normal", name = "w", seed = 5} : f32[5] @cpu
  %b = param {init = "normal", name = "b", seed = 5} : f32[5] @cpu
  %n = batch_norm %x, %m, %v, %w, %b {kernel = "k0", num_features = 5} : f32[3,5,6] @cpu
  %r = softmax %n {axis = 1, kernel = "k0"} : f32[3,5,6] @cpu
  return %r
})",
       2},
      // batch_norm in a row anchor's tail, at each element of the softmax's rows.
      {"softmax_then_batch_norm", R"(
graph @sbn(%x: f32[2,3,4] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f32[3] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[3] @cpu
  %s = softmax %x {axis = -1, kernel = "k0"} : f32[2,3,4] @cpu
  %r = batch_norm %s, %m, %v {affine = false, kernel = "k0", num_features = 3} : f32[2,3,4] @cpu
  return %r
})",
       2},
      {"f16_batch_norm_then_silu", R"(
graph @hbn(%x: f16[2,3,2,2] @cpu) -> (r) attributes {seed = 5} {
  %m = param {init = "normal", name = "m", seed = 5} : f16[3] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f16[3] @cpu
  %w = param {init = "normal", name = "w", seed = 5} : f16[3] @cpu
  %b = param {init = "normal", name = "b", seed = 5} : f16[3] @cpu
  %n = batch_norm %x, %m, %v, %w, %b {kernel = "k0", num_features = 3} : f16[2,3,2,2] @cpu
  %r = silu %n {kernel = "k0"} : f16[2,3,2,2] @cpu
  return %r
})",
       2, 1e-2},
      {"f16_layer_norm_two_dims", R"(
graph @hln2(%x: f16[2,4,8] @cpu, %w: f16[4,8] @cpu, %b: f16[4,8] @cpu) -> (r) {
  %n = layer_norm %x, %w, %b {kernel = "k0", normalized_shape = [4, 8]} : f16[2,4,8] @cpu
  %r = relu %n {kernel = "k0"} : f16[2,4,8] @cpu
  return %r
})",
       2, 1e-2},
      // The format 1.1 activations, one kernel: each member reads the one before it.
      {"activations_chain", R"(
graph @acts(%x: f32[4,8] @cpu) -> (r) {
  %a = silu %x {kernel = "k0"} : f32[4,8] @cpu
  %b = leaky_relu %a {kernel = "k0", negative_slope = 0.2} : f32[4,8] @cpu
  %c = elu %b {alpha = 0.5, kernel = "k0"} : f32[4,8] @cpu
  %d = hardswish %c {kernel = "k0"} : f32[4,8] @cpu
  %e = softplus %d {beta = 2.0, kernel = "k0", threshold = 3.0} : f32[4,8] @cpu
  %f = erf %e {kernel = "k0"} : f32[4,8] @cpu
  %g = hardsigmoid %f {kernel = "k0"} : f32[4,8] @cpu
  %h = sin %g {kernel = "k0"} : f32[4,8] @cpu
  %i = cos %h {kernel = "k0"} : f32[4,8] @cpu
  %j = rsqrt %i {kernel = "k0"} : f32[4,8] @cpu
  %k = reciprocal %j {kernel = "k0"} : f32[4,8] @cpu
  %l = abs %k {kernel = "k0"} : f32[4,8] @cpu
  %m = mul %l {kernel = "k0", scalar = 10.0} : f32[4,8] @cpu
  %n = floor %m {kernel = "k0"} : f32[4,8] @cpu
  %o = ceil %n {kernel = "k0"} : f32[4,8] @cpu
  %p = round %o {kernel = "k0"} : f32[4,8] @cpu
  %r = sign %p {kernel = "k0"} : f32[4,8] @cpu
  return %r
})",
       17},
      // Members of several dtypes: a bool intermediate between a comparison and a where, and
      // an integer root.
      {"compare_where_cast", R"(
graph @select(%x: f32[4,8] @cpu, %y: f32[8] @cpu) -> (r) {
  %m = gt %x {kernel = "k0", scalar = 0.25} : bool[4,8] @cpu
  %w = where %m, %x, %y {kernel = "k0"} : f32[4,8] @cpu
  %s = mul %w {kernel = "k0", scalar = 10.0} : f32[4,8] @cpu
  %r = cast %s {dtype = "i32", kernel = "k0"} : i32[4,8] @cpu
  return %r
})",
       4},
      {"logical_masked_fill", R"(
graph @mask(%x: f32[4,8] @cpu, %y: f32[4,8] @cpu, %b: bool[8] @cpu) -> (r) {
  %p = lt %x, %y {kernel = "k0"} : bool[4,8] @cpu
  %q = logical_or %p, %b {kernel = "k0"} : bool[4,8] @cpu
  %n = logical_not %q {kernel = "k0"} : bool[4,8] @cpu
  %r = masked_fill %x, %n {kernel = "k0", value = -1.5} : f32[4,8] @cpu
  return %r
})",
       4},
      {"f16_compare_to_bool_root", R"(
graph @hcmp(%x: f16[4,8] @cpu, %y: f16[8] @cpu) -> (r) {
  %c = cast %x {dtype = "f64", kernel = "k0"} : f64[4,8] @cpu
  %d = cast %y {dtype = "f64", kernel = "k0"} : f64[8] @cpu
  %r = ge %c, %d {kernel = "k0"} : bool[4,8] @cpu
  return %r
})",
       3},
      {"matmul_bias_relu", R"(
graph @mm(%a: f32[6,5] @cpu, %b: f32[5,7] @cpu, %bias: f32[7] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[6,7] @cpu
  %q = add %p, %bias {kernel = "k0"} : f32[6,7] @cpu
  %r = relu %q {kernel = "k0"} : f32[6,7] @cpu
  return %r
})",
       3},
      {"matmul_bias_gelu_tanh", R"(
graph @mmg(%a: f32[6,5] @cpu, %b: f32[7,5] @cpu, %bias: f32[7] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0", transpose_b = true} : f32[6,7] @cpu
  %q = add %p, %bias {kernel = "k0"} : f32[6,7] @cpu
  %r = gelu %q {approximate = "tanh", kernel = "k0"} : f32[6,7] @cpu
  return %r
})",
       3},
      {"linear_relu_with_params", R"(
graph @lin(%x: f32[3,8] @cpu) -> (r) attributes {seed = 5} {
  %w = param {init = "normal", name = "w", seed = 5} : f32[4,8] @cpu
  %bias = param {init = "normal", name = "bias", seed = 5} : f32[4] @cpu
  %p = linear %x, %w, %bias {in_features = 8, kernel = "k0", out_features = 4} : f32[3,4] @cpu
  %r = relu %p {kernel = "k0"} : f32[3,4] @cpu
  return %r
})",
       2},
      // Epilogues only oneDNN's post-ops take whole on the host (the exact gelu, residual
      // adds), generated on the sim platform and emulated.
      {"linear_gelu_residual", R"(
graph @lgr(%x: f32[2,3,8] @cpu, %res: f32[2,3,16] @cpu) -> (r) attributes {seed = 4} {
  %w = param {init = "normal", name = "w", seed = 4} : f32[16,8] @cpu
  %bias = param {init = "normal", name = "bias", seed = 5} : f32[16] @cpu
  %p = linear %x, %w, %bias {in_features = 8, kernel = "k0", out_features = 16} : f32[2,3,16] @cpu
  %g = gelu %p {kernel = "k0"} : f32[2,3,16] @cpu
  %r = add %res, %g {kernel = "k0"} : f32[2,3,16] @cpu
  return %r
})",
       3},
      {"matmul_bias_residual_relu_gelu_tanh", R"(
graph @mbrr(%a: f32[6,5] @cpu, %b: f32[5,7] @cpu, %bias: f32[7] @cpu, %res: f32[6,7] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[6,7] @cpu
  %q = add %bias, %p {kernel = "k0"} : f32[6,7] @cpu
  %s = add %q, %res {kernel = "k0"} : f32[6,7] @cpu
  %t = relu %s {kernel = "k0"} : f32[6,7] @cpu
  %r = gelu %t {approximate = "tanh", kernel = "k0"} : f32[6,7] @cpu
  return %r
})",
       5},
      // A matmul of [batch, rows, in] by one matrix: one GEMM over the stacked rows, its
      // epilogue over the 3-D product.
      {"row_stacked_matmul_bias_gelu_residual", R"(
graph @rsm(%a: f32[2,3,5] @cpu, %b: f32[5,7] @cpu, %bias: f32[7] @cpu, %res: f32[2,3,7] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[2,3,7] @cpu
  %q = add %bias, %p {kernel = "k0"} : f32[2,3,7] @cpu
  %g = gelu %q {kernel = "k0"} : f32[2,3,7] @cpu
  %r = add %g, %res {kernel = "k0"} : f32[2,3,7] @cpu
  return %r
})",
       4},
      {"f16_row_stacked_matmul_bias_relu", R"(
graph @hrsm(%a: f16[3,4,16] @cpu, %b: f16[8,16] @cpu, %bias: f16[8] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0", transpose_b = true} : f16[3,4,8] @cpu
  %q = add %p, %bias {kernel = "k0"} : f16[3,4,8] @cpu
  %r = relu %q {kernel = "k0"} : f16[3,4,8] @cpu
  return %r
})",
       3, 1e-2},
      {"f16_linear_residual_gelu", R"(
graph @hlrg(%x: f16[4,8] @cpu, %w: f16[6,8] @cpu, %res: f16[4,6] @cpu) -> (r) {
  %p = linear %x, %w {bias = false, in_features = 8, kernel = "k0", out_features = 6} : f16[4,6] @cpu
  %s = add %p, %res {kernel = "k0"} : f16[4,6] @cpu
  %r = gelu %s {kernel = "k0"} : f16[4,6] @cpu
  return %r
})",
       3, 1e-2},
      {"f16_matmul_bias_gelu_tanh", R"(
graph @hmm(%a: f16[4,16] @cpu, %b: f16[16,8] @cpu, %bias: f16[8] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f16[4,8] @cpu
  %q = add %p, %bias {kernel = "k0"} : f16[4,8] @cpu
  %r = gelu %q {approximate = "tanh", kernel = "k0"} : f16[4,8] @cpu
  return %r
})",
       3, 1e-2},
      // A convolution's epilogue (ir/fused_kernel.h): oneDNN's post-ops on the cpu platform,
      // the generated convolution and epilogue kernels emulated and on the sim platform.
      // Running statistics away from 0 and 1, so that a wrong scale or shift shows. A
      // batch_norm right after the convolution is folded into its weights (packed once where
      // they are params, scaled at every call where they are an input) and bias.
      {"conv_batch_norm_relu", R"(
graph @cbr(%x: f32[2,3,6,6] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[8,3,3,3] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[8] @cpu
  %g = param {init = "normal", name = "g", seed = 6} : f32[8] @cpu
  %b = param {init = "normal", name = "b", seed = 7} : f32[8] @cpu
  %c = conv2d %x, %w {bias = false, in_channels = 3, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %n = batch_norm %c, %m, %v, %g, %b {eps = 0.01, kernel = "k0", num_features = 8} : f32[2,8,6,6] @cpu
  %r = relu %n {kernel = "k0"} : f32[2,8,6,6] @cpu
  return %r
})",
       3, 1e-4},
      // MobileNet's ReLU6 (clamp) after a depthwise convolution and its batch_norm: on the host
      // a pass over the primitive's result; before another member, the generated epilogue.
      {"depthwise_conv_batch_norm_clamp", R"(
graph @cbc(%x: f32[2,8,6,6] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[8,1,3,3] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[8] @cpu
  %c = conv2d %x, %w {bias = false, groups = 8, in_channels = 8, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %n = batch_norm %c, %m, %v {affine = false, kernel = "k0", num_features = 8} : f32[2,8,6,6] @cpu
  %r = clamp %n {kernel = "k0", max = 0.5, min = 0.0} : f32[2,8,6,6] @cpu
  return %r
})",
       3, 1e-4},
      // MobileNetV3's hardswish after a convolution and its batch_norm: on the host a pass over
      // the primitive's result; before another member, the generated epilogue.
      {"conv_batch_norm_hardswish", R"(
graph @cbh(%x: f32[2,3,6,6] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[8,3,3,3] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[8] @cpu
  %c = conv2d %x, %w {bias = false, in_channels = 3, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %n = batch_norm %c, %m, %v {affine = false, kernel = "k0", num_features = 8} : f32[2,8,6,6] @cpu
  %r = hardswish %n {kernel = "k0"} : f32[2,8,6,6] @cpu
  return %r
})",
       3, 1e-4},
      {"conv_hardswish_then_residual", R"(
graph @chr(%x: f32[2,3,6,6] @cpu, %res: f32[2,8,6,6] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[8,3,3,3] @cpu
  %c = conv2d %x, %w {bias = false, in_channels = 3, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %h = hardswish %c {kernel = "k0"} : f32[2,8,6,6] @cpu
  %r = add %h, %res {kernel = "k0"} : f32[2,8,6,6] @cpu
  return %r
})",
       3, 1e-4},
      {"conv_clamp_then_residual", R"(
graph @ccr(%x: f32[2,3,6,6] @cpu, %res: f32[2,8,6,6] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[8,3,3,3] @cpu
  %c = conv2d %x, %w {bias = false, in_channels = 3, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %l = clamp %c {kernel = "k0", min = -0.5} : f32[2,8,6,6] @cpu
  %r = add %l, %res {kernel = "k0"} : f32[2,8,6,6] @cpu
  return %r
})",
       3, 1e-4},
      {"conv_batch_norm_residual_relu_8_channels", R"(
graph @cbar8(%x: f32[2,8,6,6] @cpu, %w: f32[8,8,3,3] @cpu, %res: f32[2,8,6,6] @cpu) -> (r) attributes {seed = 3} {
  %wb = param {init = "normal", name = "wb", seed = 8} : f32[8] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[8] @cpu
  %c = conv2d %x, %w, %wb {in_channels = 8, kernel = "k0", kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %n = batch_norm %c, %m, %v {affine = false, kernel = "k0", num_features = 8} : f32[2,8,6,6] @cpu
  %a = add %res, %n {kernel = "k0"} : f32[2,8,6,6] @cpu
  %r = relu %a {kernel = "k0"} : f32[2,8,6,6] @cpu
  return %r
})",
       4, 1e-4},
      {"conv_bias_residual_batch_norm_16_channels_strided", R"(
graph @cab16(%x: f32[2,16,8,8] @cpu, %res: f32[2,16,4,4] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f32[16,16,3,3] @cpu
  %wb = param {init = "normal", name = "wb", seed = 8} : f32[16] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f32[16] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f32[16] @cpu
  %g = param {init = "normal", name = "g", seed = 6} : f32[16] @cpu
  %b = param {init = "normal", name = "b", seed = 7} : f32[16] @cpu
  %c = conv2d %x, %w, %wb {in_channels = 16, kernel = "k0", kernel_size = 3, out_channels = 16, padding = 1, stride = 2} : f32[2,16,4,4] @cpu
  %a = add %c, %res {kernel = "k0"} : f32[2,16,4,4] @cpu
  %r = batch_norm %a, %m, %v, %g, %b {kernel = "k0", num_features = 16} : f32[2,16,4,4] @cpu
  return %r
})",
       3, 1e-4},
      {"f16_conv_batch_norm_relu", R"(
graph @hcbr(%x: f16[1,4,5,5] @cpu) -> (r) attributes {seed = 3} {
  %w = param {init = "normal", name = "w", seed = 3} : f16[4,4,3,3] @cpu
  %m = param {init = "normal", name = "m", seed = 4} : f16[4] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 5} : f16[4] @cpu
  %c = conv2d %x, %w {bias = false, in_channels = 4, kernel = "k0", kernel_size = 3, out_channels = 4, padding = 1} : f16[1,4,5,5] @cpu
  %n = batch_norm %c, %m, %v {affine = false, kernel = "k0", num_features = 4} : f16[1,4,5,5] @cpu
  %r = relu %n {kernel = "k0"} : f16[1,4,5,5] @cpu
  return %r
})",
       3, 2e-2},
      {"f16_chain", R"(
graph @half(%x: f16[4,8] @cpu, %y: f16[8] @cpu) -> (r) {
  %a = add %x, %y {kernel = "k0"} : f16[4,8] @cpu
  %b = mul %a {kernel = "k0", scalar = 3} : f16[4,8] @cpu
  %r = gelu %b {kernel = "k0"} : f16[4,8] @cpu
  return %r
})",
       3, 1e-2},
      {"bf16_softmax_then_add", R"(
graph @bsoft(%x: bf16[3,10] @cpu, %y: bf16[3,10] @cpu) -> (r) {
  %s = softmax %x {kernel = "k0"} : bf16[3,10] @cpu
  %r = add %s, %y {kernel = "k0"} : bf16[3,10] @cpu
  return %r
})",
       2, 1e-2},
      {"f16_layer_norm_then_relu", R"(
graph @hln(%x: f16[2,32] @cpu) -> (r) {
  %n = layer_norm %x {kernel = "k0"} : f16[2,32] @cpu
  %r = relu %n {kernel = "k0"} : f16[2,32] @cpu
  return %r
})",
       2, 1e-2},
  };
}

std::map<std::string, Tensor> inputsOf(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

std::unique_ptr<Graph> parse(const std::string& text) {
  auto graph = parseGraph(text, "fusion.gxir");
  std::vector<std::string> problems = verifyGraph(*graph);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return graph;
}

// The graph with its memory planned, as the cpu platform runs it.
std::unique_ptr<Graph> planned(std::unique_ptr<Graph> graph) {
  PassManager manager;
  manager.add("plan-memory");
  manager.run(*graph, PassContext{});
  return graph;
}

class FusedKernelTest : public testing::TestWithParam<FusionCase> {};

TEST_P(FusedKernelTest, OneKernelForTheFusedGroup) {
  auto graph = parse(GetParam().ir);
  CudaSource source = generateCudaSource(*graph);
  // A fused convolution has two: the convolution alone, then its epilogue.
  const CudaKernel& fused = source.kernels.back();
  const OpKind first = fused.ops.front()->kind;
  const size_t kernels = first == OpKind::Conv2d ? 2 : 1;
  ASSERT_EQ(source.kernels.size(), kernels);
  EXPECT_EQ(fused.ops.size(), GetParam().fusedOps);
  EXPECT_EQ(fused.epilogue,
            first == OpKind::Matmul || first == OpKind::Linear || first == OpKind::Conv2d);
  if (kernels == 2) {
    EXPECT_EQ(source.kernels[0].ops, std::vector<const Op*>{fused.ops.front()});
    EXPECT_FALSE(source.kernels[0].epilogue);
  }
  // One definition each, and the kernel ABI.
  std::regex definition("extern \"C\" __global__ void (gxc_\\w+)\\(GxcArgs args\\)");
  auto found = std::sregex_iterator(source.text.begin(), source.text.end(), definition);
  ASSERT_EQ(static_cast<size_t>(std::distance(found, std::sregex_iterator())), kernels);
  std::advance(found, kernels - 1);
  EXPECT_EQ((*found)[1].str(), fused.name);
  // The large cases' loops (gxc_kernel.h's macros): in runs, or flat.
  const std::map<std::string, std::string> loops{
      {"batch_norm_add_relu_in_runs", "GXC_RUNS"},
      {"channel_and_broadcast_reads_in_runs", "GXC_RUNS"},
      {"bias_and_row_scale_in_runs", "GXC_RUNS"},
      {"short_rows_stay_flat", "GXC_GRID_STRIDE_SIMD32"},
      {"mask_read_at_two_coordinates", "GXC_GRID_STRIDE_SIMD32"}};
  if (auto loop = loops.find(GetParam().name); loop != loops.end()) {
    EXPECT_NE(source.text.find("  " + loop->second + "("), std::string::npos) << source.text;
  }
}

TEST_P(FusedKernelTest, CpuMatchesTheReference) {
  auto graph = planned(parse(GetParam().ir));
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  auto actual = HostExecutor(*graph).run(inputs);
  expectOutputsClose(actual, expected, GetParam().tolerance);
}

// The fused kernel as a GPU launches it, every thread of its blocks emulated: at the GPU's
// block size, and at 32 and 1024 threads per block.
TEST_P(FusedKernelTest, EmulatedGpuBlocksMatchTheReference) {
  auto graph = planned(parse(GetParam().ir));
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  for (int64_t block : {int64_t{0}, int64_t{32}, int64_t{1024}}) {
    SCOPED_TRACE(block);
    auto actual = HostExecutor(*graph, HostLaunchMode{true, block}).run(inputs);
    expectOutputsClose(actual, expected, GetParam().tolerance);
  }
}

TEST_P(FusedKernelTest, SimMatchesTheReference) {
  auto host = parse(GetParam().ir);
  std::map<std::string, Tensor> inputs = inputsOf(*host);
  auto expected = ReferenceExecutor(*host).run(inputs);
  // The same graph on cuda:0, with its inputs loaded there and its output copied back.
  auto graph = parse(std::regex_replace(GetParam().ir, std::regex("@cpu"), "@cuda:0"));
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager manager;
  for (const char* pass : {"insert-copies", "plan-memory", "assign-streams"}) manager.add(pass);
  manager.run(*graph, context);
  SimConfig config;
  config.memoryPerGpu = int64_t{1} << 30;
  auto actual = SimExecutor(*graph, config).run(inputs);
  expectOutputsClose(actual, expected, GetParam().tolerance);
}

INSTANTIATE_TEST_SUITE_P(Patterns, FusedKernelTest, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<FusionCase>& info) {
                           return info.param.name;
                         });

// A NaN through a convolution and its clamp (or hardswish) stays NaN on the host, as torch and
// the reference keep it (oneDNN's clip post-op would make it the lower bound: conv_post_ops.h).
void expectANaNThroughAConvolutionAndThen(const std::string& activation) {
  auto graph = planned(parse(R"(
graph @nan(%x: f32[1,4,5,5] @cpu, %w: f32[4,1,3,3] @cpu) -> (r) {
  %c = conv2d %x, %w {bias = false, groups = 4, in_channels = 4, kernel = "k0", kernel_size = 3, out_channels = 4, padding = 1} : f32[1,4,5,5] @cpu
  %r = )" + activation + R"( : f32[1,4,5,5] @cpu
  return %r
})"));
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  inputs.at("x").storeFloat(12, std::nanf(""));  // channel 0, the centre: 9 outputs read it
  Tensor actual = HostExecutor(*graph).run(inputs).at("r");
  Tensor expected = ReferenceExecutor(*graph).run(inputs).at("r");
  int nans = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    ASSERT_EQ(std::isnan(actual.loadFloat(i)), std::isnan(expected.loadFloat(i))) << i;
    nans += std::isnan(expected.loadFloat(i));
    if (!std::isnan(expected.loadFloat(i))) {
      EXPECT_NEAR(actual.loadFloat(i), expected.loadFloat(i), 1e-5) << i;
    }
  }
  EXPECT_EQ(nans, 9);
}

TEST(FusedConvClampTest, NaNStaysNaN) {
  expectANaNThroughAConvolutionAndThen(R"(clamp %c {kernel = "k0", max = 6.0, min = 0.0})");
  expectANaNThroughAConvolutionAndThen(R"(hardswish %c {kernel = "k0"})");
}

// 2^19 outputs: past 2^18 the clamp runs on every core, each thread a chunk; a NaN in each half.
TEST(FusedConvClampTest, LargeOutputClampedOnEveryCore) {
  auto graph = planned(parse(R"(
graph @wide(%x: f32[1,8,256,256] @cpu, %w: f32[8,8,1,1] @cpu) -> (r) {
  %c = conv2d %x, %w {bias = false, in_channels = 8, kernel = "k0", kernel_size = 1, out_channels = 8} : f32[1,8,256,256] @cpu
  %r = clamp %c {kernel = "k0", max = 0.5, min = -0.25} : f32[1,8,256,256] @cpu
  return %r
})"));
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  const int64_t plane = 256 * 256;
  inputs.at("x").storeFloat(100, std::nanf(""));                // channel 0: 8 outputs read it
  inputs.at("x").storeFloat(7 * plane + 60000, std::nanf(""));  // channel 7, the last chunk
  Tensor actual = HostExecutor(*graph).run(inputs).at("r");
  Tensor expected = ReferenceExecutor(*graph).run(inputs).at("r");
  int nans = 0, low = 0, high = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const float e = expected.loadFloat(i), a = actual.loadFloat(i);
    ASSERT_EQ(std::isnan(a), std::isnan(e)) << i;
    nans += std::isnan(e);
    if (std::isnan(e)) continue;
    ASSERT_NEAR(a, e, 1e-5) << i;
    low += e == -0.25f;
    high += e == 0.5f;
  }
  EXPECT_EQ(nans, 16);
  EXPECT_GT(low, 0);
  EXPECT_GT(high, 0);
}

TEST(CudaSourceTest, IdenticalKernelsAreWrittenOnce) {
  auto graph = parse(R"(
graph @twins(%x: f32[4,8] @cpu, %y: f32[4,8] @cpu) -> (a, b, c) {
  %a = relu %x : f32[4,8] @cpu
  %b = relu %y : f32[4,8] @cpu
  %c = relu %b : f32[4,8] @cpu
  return %a, %b, %c
})");
  CudaSource source = generateCudaSource(*graph);
  ASSERT_EQ(source.kernels.size(), 3u);
  EXPECT_EQ(source.kernels[0].name, source.kernels[1].name);
  EXPECT_EQ(source.kernels[1].name, source.kernels[2].name);
  size_t definitions = 0;
  for (size_t at = source.text.find("__global__"); at != std::string::npos;
       at = source.text.find("__global__", at + 1))
    ++definitions;
  EXPECT_EQ(definitions, 1u);
  // The same graph gives the same text.
  EXPECT_EQ(generateCudaSource(*graph).text, source.text);
}

// A slice along axis 0 is a view of its operand's bytes; along any other axis it is a
// kernel, which moves elements bit for bit (f16 and i64 alike).
// A loop over fewer than 2^31 elements has an int index, and so do the coordinates and the
// broadcast indices made of it (the host's compiler vectorizes a gather at int indices only);
// past 2^31 they are 64-bit. Codegen only: nothing of 8 GiB is allocated.
TEST(CudaSourceTest, IndicesAreIntsInIntIndexedLoops) {
  const char* const kMask = R"(
graph @mask(%x: f32[8,2,32,32] @cpu, %mask: f32[8,1,1,32] @cpu) -> (r) {
  %r = add %x, %mask : f32[8,2,32,32] @cpu
  return %r
})";
  std::string text = generateCudaSource(*parse(kMask)).text;
  EXPECT_NE(text.find("GXC_GRID_STRIDE_SIMD32(i, 16384LL)"), std::string::npos) << text;
  EXPECT_NE(text.find("const int c0 = i / 2048;"), std::string::npos) << text;
  EXPECT_NE(text.find("const int c3 = (i) % 32;"), std::string::npos) << text;
  EXPECT_NE(text.find("c0 * 32 + c3"), std::string::npos) << text;
  std::string wide =
      generateCudaSource(*parse(std::regex_replace(kMask, std::regex("f32\\[8,2,32,32\\]"),
                                                   "f32[8,2,16777216,32]")))
          .text;
  EXPECT_NE(wide.find("GXC_GRID_STRIDE_SIMD(i, 8589934592LL)"), std::string::npos) << wide;
  EXPECT_NE(wide.find("const gxc_i64 c0 = i / 1073741824LL;"), std::string::npos) << wide;
}

TEST(CudaSourceTest, SlicesOffAxisZeroAreKernels) {
  auto graph = parse(R"(
graph @slices(%x: f16[4,6,5] @cpu, %i: i64[3,7] @cpu) -> (a, b, c, d) {
  %a = slice %x {axis = 0, end = 3, start = 1} : f16[2,6,5] @cpu
  %b = slice %x {axis = 1, end = 6, start = 2} : f16[4,4,5] @cpu
  %c = slice %x {axis = -1, end = 2, start = 0} : f16[4,6,2] @cpu
  %d = slice %i {axis = 1, end = 5, start = 3} : i64[3,2] @cpu
  return %a, %b, %c, %d
})");
  CudaSource source = generateCudaSource(*graph);
  ASSERT_EQ(source.kernels.size(), 3u);
  EXPECT_EQ(source.kernels[0].output->name, "b");
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  auto actual = HostExecutor(*planned(std::move(graph))).run(inputs);
  for (const auto& [name, want] : expected) {
    ASSERT_EQ(actual.at(name).shape(), want.shape()) << name;
    EXPECT_EQ(std::memcmp(actual.at(name).data(), want.data(), want.nbytes()), 0) << name;
  }
}

// The embedded header is gxc_kernel.h with gxc_kernel_numbers.h and gxc_kernel_emulation.h
// spliced in where they are included. Nothing else is included but the emulation's system
// headers, which only the host's emulating build compiles: NVRTC gets one self-contained file.
TEST(CudaSourceTest, HeaderIsTheEmbeddedFiles) {
  auto read = [](const std::string& name) {
    std::ifstream file(std::string(GXC_SOURCE_DIR) + "/codegen/" + name);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  std::string text = read("gxc_kernel.h");
  for (std::string part :
       {"gxc_kernel_numbers.h", "gxc_kernel_emulation.h", "gxc_kernel_memcheck.h"}) {
    const std::string include = "#include \"" + part + "\"\n";
    size_t at = text.find(include);
    ASSERT_NE(at, std::string::npos) << part;
    text.replace(at, include.size(), read(part));
  }
  EXPECT_EQ(kernelHeaderText(), text);
  // The emulation part as spliced: its own include of the memory checks replaced too.
  std::string emulation = read("gxc_kernel_emulation.h");
  const std::string memcheck = "#include \"gxc_kernel_memcheck.h\"\n";
  emulation.replace(emulation.find(memcheck), memcheck.size(), read("gxc_kernel_memcheck.h"));
  std::string rest(kernelHeaderText());
  rest.erase(rest.find(emulation), emulation.size());
  EXPECT_EQ(rest.find("#include"), std::string::npos);
  EXPECT_NE(text.find("#if defined(__CUDACC__) || defined(GXC_EMULATE_BLOCKS)"), std::string::npos);
  EXPECT_NE(
      kernelHeaderText().find("#define GXC_MAX_ARGS " + std::to_string(kMaxKernelArgs) + "\n"),
      std::string::npos);
}

// A second build of the same kernels compiles nothing: the shared object comes from the cache.
TEST(HostKernelCacheTest, SecondBuildIsACacheHit) {
  namespace fs = std::filesystem;
  fs::path directory = fs::path(testing::TempDir()) / ("gxc-cache-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  auto graph = parse(cases()[0].ir);
  HostGeneratedKernels first(*graph, KernelCache(directory));
  EXPECT_EQ(first.cacheStats().compiles, 1);
  EXPECT_EQ(first.cacheStats().hits, 0);
  HostGeneratedKernels second(*graph, KernelCache(directory));
  EXPECT_EQ(second.cacheStats().compiles, 0);
  EXPECT_EQ(second.cacheStats().hits, 1);
  fs::remove_all(directory);
}

// A compiler that fails is a runtime error quoting its first error line.
TEST(HostKernelCacheTest, CompilerFailureIsARuntimeError) {
  namespace fs = std::filesystem;
  fs::path script = fs::path(testing::TempDir()) / ("fake-cxx-" + std::to_string(::getpid()));
  {
    std::ofstream out(script);
    out << "#!/bin/sh\n"
           "if [ \"$1\" = --version ]; then echo 'fake c++ 1.0'; exit 0; fi\n"
           "echo 'In file included from kernels.cpp:1:'\n"
           "echo 'kernels.cpp:3:7: error: the fake compiler refuses'\n"
           "exit 1\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  ::setenv("GXC_HOST_CXX", script.c_str(), 1);
  auto graph = parse(cases()[0].ir);
  try {
    HostGeneratedKernels kernels(*graph, KernelCache(std::nullopt));
    ADD_FAILURE() << "the build did not fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(error.what()).find("kernels.cpp:3:7: error: the fake compiler refuses"),
              std::string::npos)
        << error.what();
  }
  ::unsetenv("GXC_HOST_CXX");
  fs::remove(script);
}

}  // namespace
}  // namespace gxc
