// The verifier's kernel rules (ir/fused_kernel.h): each broken rule named in one line, with
// the op and the kernel; well-formed kernels accepted.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/verifier.h"

namespace gxc {
namespace {

// The first problem the verifier finds in `body` (ops of a graph with inputs %x f32[4,8] and
// %w f32[8,8] on cuda:0, returning %out).
std::string firstProblem(const std::string& body) {
  std::string text =
      "graph @g(%x: f32[4,8] @cuda:0, %w: f32[8,8] @cuda:0, %v: f32[8] @cuda:0) -> (out) {\n" +
      body + "  return %out\n}\n";
  try {
    auto graph = parseGraph(text, "g.gxir");
    std::vector<std::string> problems = verifyGraph(*graph);
    return problems.empty() ? "" : problems.front();
  } catch (const Error& error) {  // the parser checks attribute kinds itself
    return error.message();
  }
}

TEST(KernelVerifierTest, NamesEachBrokenKernelRule) {
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = exp %a {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %b = neg %x : f32[4,8] @cuda:0\n"
                         "  %c = exp %a {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = add %b, %c : f32[4,8] @cuda:0\n"),
            "op %c: kernel 'k0' is not contiguous: %b, not a member, comes between its members");
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %b = exp %a {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = add %a, %b : f32[4,8] @cuda:0\n"),
            "op %a: %out reads its result outside kernel 'k0'; only the last member's result "
            "may leave a kernel");
  EXPECT_EQ(firstProblem("  %out = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %b = exp %out {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: its result is a graph output, but only the last member of kernel 'k0' "
            "may be one");
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = exp %a {kernel = \"k0\"} : f32[4,8] @cuda:1\n"),
            "op %out: kernel 'k0' has members on cuda:0 and cuda:1");
  EXPECT_EQ(firstProblem("  %a = softmax %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = log_softmax %a {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: kernel 'k0' has a second anchor after %a");
  // A tail may broadcast the anchor's result to a larger shape; a prologue may feed it.
  EXPECT_EQ(firstProblem("  %a = sum %x {axis = 1, keepdim = true, kernel = \"k0\"} : f32[4,1] "
                         "@cuda:0\n"
                         "  %out = add %a, %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %p = mul %x, %v {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = softmax %p {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = exp %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %a: no later member of kernel 'k0' reads its result; every member but the last "
            "must feed one");
  EXPECT_EQ(firstProblem("  %g = relu %v {kernel = \"k0\"} : f32[8] @cuda:0\n"
                         "  %out = layer_norm %x, %g {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: only its first operand may be computed in kernel 'k0', not %g");
  // batch_norm is elementwise, but reads its running statistics at each element's channel:
  // its x may be computed in the kernel, a per-channel operand may not.
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = batch_norm %a, %v, %v {affine = false, kernel = \"k0\", "
                         "num_features = 8} : f32[4,8] @cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %g = relu %v {kernel = \"k0\"} : f32[8] @cuda:0\n"
                         "  %out = batch_norm %x, %g, %v {affine = false, kernel = \"k0\", "
                         "num_features = 8} : f32[4,8] @cuda:0\n"),
            "op %out: only its first operand may be computed in kernel 'k0', not %g");
  EXPECT_EQ(firstProblem("  %a = relu %x {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = matmul %a, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: a GEMM may only be the first member of kernel 'k0'");
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = exp %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: only a bias add, then relu, gelu and the add of a residual from outside, "
            "each reading the member before, may follow the GEMM %m in kernel 'k0'");
  // The exact gelu and a residual add follow a GEMM; the bias add only comes first.
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %g = gelu %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = add %x, %g {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %r = relu %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = add %r, %v {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: only a bias add, then relu, gelu and the add of a residual from outside, "
            "each reading the member before, may follow the GEMM %m in kernel 'k0'");
  // A residual computed in the kernel is no residual: the library reads it, it cannot
  // evaluate it.
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %a = relu %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = add %a, %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %out: only a bias add, then relu, gelu and the add of a residual from outside, "
            "each reading the member before, may follow the GEMM %m in kernel 'k0'");
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %a = relu %m {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %b = relu %a {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %c = relu %b {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %d = relu %c {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = relu %d {kernel = \"k0\"} : f32[4,8] @cuda:0\n"),
            "op %m: kernel 'k0' has 5 members after the GEMM; at most 4 may follow it");
  EXPECT_EQ(firstProblem("  %m = matmul %x, %w {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %b = add %m, %v {kernel = \"k0\"} : f32[4,8] @cuda:0\n"
                         "  %out = gelu %b {approximate = \"tanh\", kernel = \"k0\"} : f32[4,8] "
                         "@cuda:0\n"),
            "");
  EXPECT_EQ(firstProblem("  %t = transpose %x {kernel = \"k0\"} : f32[8,4] @cuda:0\n"
                         "  %out = relu %t {kernel = \"k0\"} : f32[8,4] @cuda:0\n"),
            "op %t: transpose f32[8,4] cannot be a member of kernel 'k0'");
  EXPECT_EQ(firstProblem("  %out = relu %x {kernel = 3} : f32[4,8] @cuda:0\n"),
            "attribute 'kernel' must be a string");
}

// A convolution's kernels: the graph of firstProblem with %x an image batch f32[1,2,4,4],
// %w a 3x3 kernel and %r a residual of the convolution's shape.
std::string firstConvProblem(const std::string& body) {
  std::string text =
      "graph @g(%x: f32[1,2,4,4] @cpu, %w: f32[2,2,3,3] @cpu, %v: f32[2] @cpu, %r: "
      "f32[1,2,4,4] @cpu) -> (out) {\n" +
      body + "  return %out\n}\n";
  auto graph = parseGraph(text, "g.gxir");
  std::vector<std::string> problems = verifyGraph(*graph);
  return problems.empty() ? "" : problems.front();
}

const char* const kConv =
    "  %c = conv2d %x, %w {bias = false, in_channels = 2, kernel = \"k0\", kernel_size = 3, "
    "out_channels = 2, padding = 1} : f32[1,2,4,4] @cpu\n";

TEST(KernelVerifierTest, AConvolutionLeadsItsEpilogueOnly) {
  EXPECT_EQ(firstConvProblem(std::string(kConv) +
                             "  %n = batch_norm %c, %v, %v {affine = false, kernel = \"k0\", "
                             "num_features = 2} : f32[1,2,4,4] @cpu\n"
                             "  %a = add %r, %n {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"
                             "  %out = relu %a {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"),
            "");
  const std::string onlyEpilogue =
      "only batch_norm, relu, clamp, hardswish and the add of a residual from outside, each "
      "reading the member before, may follow the convolution %c in kernel 'k0'";
  EXPECT_EQ(firstConvProblem(std::string(kConv) +
                             "  %out = sigmoid %c {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"),
            "op %out: " + onlyEpilogue);
  EXPECT_EQ(firstConvProblem(std::string(kConv) +
                             "  %out = add %c, %c {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"),
            "op %out: " + onlyEpilogue);
  EXPECT_EQ(firstConvProblem(std::string(kConv) +
                             "  %e = exp %r {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"
                             "  %out = add %c, %e {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"),
            "op %e: " + onlyEpilogue);
  EXPECT_EQ(firstConvProblem("  %a = relu %x {kernel = \"k0\"} : f32[1,2,4,4] @cpu\n"
                             "  %out = conv2d %a, %w {bias = false, in_channels = 2, kernel = "
                             "\"k0\", kernel_size = 3, out_channels = 2, padding = 1} : "
                             "f32[1,2,4,4] @cpu\n"),
            "op %out: a convolution may only be the first member of kernel 'k0'");
}

}  // namespace
}  // namespace gxc
