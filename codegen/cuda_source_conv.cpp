// The generated conv2d and conv_transpose2d kernels: a direct convolution, one thread per
// output element, summing its receptive field in f32 with the geometry of ir/conv_geometry.h
// baked in. On the host the cpu platform runs oneDNN instead (runtime/host/cpu_conv.h); these
// kernels are what the cuda platform runs and the second implementation those are checked
// against.
#include <fmt/format.h>

#include "codegen/cuda_emit.h"
#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

// What tells the two apart: which input row (column) kernel tap ky (kx) of output row oy
// (column ox) reads, or none, and where the tap's weight is. A conv2d reads row
// oy * stride - padding + ky * dilation. A conv_transpose2d gathers what its input scatters:
// input row iy reaches output row iy * stride - padding + ky * dilation, so output row oy reads
// (oy + padding - ky * dilation) / stride where that divides exactly. Its weight is
// [in, out/groups, kh, kw], conv2d's [out, in/groups, kh, kw].
struct Taps {
  const char* row;
  const char* column;
  const char* weightIndex;
};

constexpr Taps kConvTaps = {
    "        const gxc_i64 iy = oy * {sh} - {padTop} + ky * {dh};\n"
    "        if (iy < 0 || iy >= {inH}) continue;\n",
    "          const gxc_i64 ix = ox * {sw} - {padLeft} + kx * {dw};\n"
    "          if (ix < 0 || ix >= {inW}) continue;\n",
    "((oc * {groupIn} + ic - firstIn) * {kh} + ky) * {kw} + kx"};

constexpr Taps kTransposedTaps = {
    "        const gxc_i64 ty = oy + {padTop} - ky * {dh};\n"
    "        if (ty < 0 || ty % {sh} != 0 || ty / {sh} >= {inH}) continue;\n"
    "        const gxc_i64 iy = ty / {sh};\n",
    "          const gxc_i64 tx = ox + {padLeft} - kx * {dw};\n"
    "          if (tx < 0 || tx % {sw} != 0 || tx / {sw} >= {inW}) continue;\n"
    "          const gxc_i64 ix = tx / {sw};\n",
    "((ic * {groupOut} + oc % {groupOut}) * {kh} + ky) * {kw} + kx"};

}  // namespace

KernelBody convKernel(const Op& op, const KernelArgs& args) {
  GXC_CHECK(op.kind == OpKind::Conv2d || op.kind == OpKind::ConvTranspose2d,
            "layer '{}': {} is not a convolution", op.layerName(), opName(op.kind));
  const bool transposed = op.kind == OpKind::ConvTranspose2d;
  const ConvGeometry g = transposed ? convTranspose2dGeometry(op) : conv2dGeometry(op);
  const Taps& taps = transposed ? kTransposedTaps : kConvTaps;
  const int64_t groupIn = g.inChannels / g.groups, groupOut = g.outChannels / g.groups;
  const int64_t count = op.result->type.numel();
  const int x = args.indexOf(op.operands[0]), w = args.indexOf(op.operands[1]);
  // f32 for f32, f16 and bf16; double for f64 (which the cpu platform runs through this kernel).
  const std::string real = computeType(op.result->type.dtype);
  std::string bias = fmt::format("({})0", real);
  if (g.bias)
    bias = loadElement(op.operands[2]->type.dtype,
                       fmt::format("in{}", args.indexOf(op.operands[2])), "oc");
  // Output channel oc belongs to group oc / groupOut, which reads input channels
  // [firstIn, firstIn + groupIn).
  const std::string text =
      std::string(
          "    const gxc_i64 ox = i % {outW}, oy = (i / {outW}) % {outH};\n"
          "    const gxc_i64 oc = (i / ({outW} * {outH})) % {outC}, n = i / ({outW} * "
          "{outH} * {outC});\n"
          "    const gxc_i64 firstIn = oc / {groupOut} * {groupIn};\n"
          "    {real} sum = {bias};\n"
          "    for (gxc_i64 ic = firstIn; ic < firstIn + {groupIn}; ++ic) {{\n"
          "      for (gxc_i64 ky = 0; ky < {kh}; ++ky) {{\n") +
      taps.row + "        for (gxc_i64 kx = 0; kx < {kw}; ++kx) {{\n" + taps.column +
      "          const gxc_i64 xi = ((n * {inC} + ic) * {inH} + iy) * {inW} + ix;\n"
      "          const gxc_i64 wi = " +
      taps.weightIndex +
      ";\n"
      "          sum += {xLoad} * {wLoad};\n"
      "        }}\n"
      "      }}\n"
      "    }}\n"
      "    {store}\n"
      "  }}\n";
  std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ");
  body += fmt::format(
      fmt::runtime(text), fmt::arg("outW", intLiteral(g.outW)),
      fmt::arg("outH", intLiteral(g.outH)), fmt::arg("outC", intLiteral(g.outChannels)),
      fmt::arg("inC", intLiteral(g.inChannels)), fmt::arg("inH", intLiteral(g.inH)),
      fmt::arg("inW", intLiteral(g.inW)), fmt::arg("groupIn", intLiteral(groupIn)),
      fmt::arg("groupOut", intLiteral(groupOut)), fmt::arg("kh", intLiteral(g.kernelH)),
      fmt::arg("kw", intLiteral(g.kernelW)), fmt::arg("sh", intLiteral(g.strideH)),
      fmt::arg("sw", intLiteral(g.strideW)), fmt::arg("dh", intLiteral(g.dilationH)),
      fmt::arg("dw", intLiteral(g.dilationW)), fmt::arg("padTop", intLiteral(g.padTop)),
      fmt::arg("padLeft", intLiteral(g.padLeft)), fmt::arg("bias", bias), fmt::arg("real", real),
      fmt::arg("xLoad", loadElement(op.operands[0]->type.dtype, fmt::format("in{}", x), "xi")),
      fmt::arg("wLoad", loadElement(op.operands[1]->type.dtype, fmt::format("in{}", w), "wi")),
      fmt::arg("store", storeElement(op.result->type.dtype, "out", "i", "sum")));
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count)};
}

}  // namespace gxc::cuda
