// The generated kernels of max_pool2d, avg_pool2d and adaptive_avg_pool2d: one thread per
// output element visits its window of the input plane, with the geometry of
// ir/pool_geometry.h baked in, in f32 for f32, f16 and bf16 and in double for f64. The cpu and
// sim platforms run the same text built for the host. Their backward ops run one thread per
// input element, which gathers dy from the windows that hold it (overlapping windows need no
// atomics), in the order of the outputs, as ATen's scatter adds them.
#include <fmt/args.h>
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/pool_geometry.h"

namespace gxc::cuda {
namespace {

// The pool's sizes as named arguments of a kernel's text, {inH} {inW} {outH} {outW} {kh} {kw}
// {sh} {sw} {ph} {pw}, and the texts' own arguments after them.
fmt::dynamic_format_arg_store<fmt::format_context> poolArgs(
    const PoolGeometry& g, std::initializer_list<std::pair<const char*, std::string>> more = {}) {
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  const std::pair<const char*, int64_t> sizes[] = {
      {"inH", g.inH},    {"inW", g.inW},    {"outH", g.outH},  {"outW", g.outW}, {"kh", g.kernelH},
      {"kw", g.kernelW}, {"sh", g.strideH}, {"sw", g.strideW}, {"ph", g.padH},   {"pw", g.padW}};
  for (const auto& [name, size] : sizes) store.push_back(fmt::arg(name, intLiteral(size)));
  for (const auto& [name, text] : more) store.push_back(fmt::arg(name, text));
  return store;
}

// Statements that set y0, y1, x0, x1 (the input rows and columns the window reads) and, for a
// fixed window, where it starts and ends in the padded input (what count_include_pad divides
// by; a ceil_mode window is clipped at the right padding, as PyTorch does).
std::string windowBounds(const PoolGeometry& g) {
  if (g.adaptive)
    return fmt::vformat(
        "    const gxc_i64 y0 = oy * {inH} / {outH}, y1 = ((oy + 1) * {inH} + {outH} - 1) / "
        "{outH};\n"
        "    const gxc_i64 x0 = ox * {inW} / {outW}, x1 = ((ox + 1) * {inW} + {outW} - 1) / "
        "{outW};\n",
        poolArgs(g));
  return fmt::vformat(
      "    const gxc_i64 yStart = oy * {sh} - {ph}, xStart = ox * {sw} - {pw};\n"
      "    const gxc_i64 yPadEnd = yStart + {kh} < {inH} + {ph} ? yStart + {kh} : {inH} + {ph};\n"
      "    const gxc_i64 xPadEnd = xStart + {kw} < {inW} + {pw} ? xStart + {kw} : {inW} + {pw};\n"
      "    const gxc_i64 y0 = yStart > 0 ? yStart : 0, y1 = yPadEnd < {inH} ? yPadEnd : {inH};\n"
      "    const gxc_i64 x0 = xStart > 0 ? xStart : 0, x1 = xPadEnd < {inW} ? xPadEnd : {inW};\n",
      poolArgs(g));
}

// max_pool2d_backward and avg_pool2d_backward, (x, dy) of fixed windows.
KernelBody poolBackwardKernel(const Op& op, const KernelArgs& args) {
  const PoolGeometry g = pool2dGeometry(op);
  const int64_t count = op.result->type.numel();
  const DType dtype = op.operands[0]->type.dtype;
  const std::string real = computeType(dtype);
  const std::string loadDy =
      loadElement(dtype, fmt::format("in{}", args.indexOf(op.operands[1])), "o");
  std::string take;
  if (op.kind == OpKind::MaxPool2dBackward) {
    // ATen's rule: the window's first element unless a later one is greater or NaN, so ties
    // go to the first maximal element in row-major order and NaNs to the last.
    const std::string loadX =
        loadElement(dtype, fmt::format("in{}", args.indexOf(op.operands[0])), "at");
    take = fmt::format(
        "      gxc_i64 arg = y0 * {inW} + x0;\n"
        "      {real} best = gxc_neg_inf();\n"
        "      for (gxc_i64 y = y0; y < y1; ++y) {{\n"
        "        for (gxc_i64 x = x0; x < x1; ++x) {{\n"
        "          const gxc_i64 at = plane * {inH} * {inW} + y * {inW} + x;\n"
        "          const {real} v = {loadX};\n"
        "          if (v > best || v != v) {{ best = v; arg = y * {inW} + x; }}\n"
        "        }}\n"
        "      }}\n"
        "      if (arg == iy * {inW} + ix) sum += {loadDy};\n",
        fmt::arg("inH", intLiteral(g.inH)), fmt::arg("inW", intLiteral(g.inW)),
        fmt::arg("real", real), fmt::arg("loadX", loadX), fmt::arg("loadDy", loadDy));
  } else {
    const std::string divisor =
        g.countIncludePad ? "(yPadEnd - yStart) * (xPadEnd - xStart)" : "(y1 - y0) * (x1 - x0)";
    take = fmt::format("      sum += {} / ({})({});\n", loadDy, real, divisor);
  }
  // The outputs whose window [o s - p, o s - p + k) holds the input row (column) i.
  std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ");
  body += fmt::vformat(
      "    const gxc_i64 ix = i % {inW}, iy = (i / {inW}) % {inH}, plane = i / ({inW} * {inH});\n"
      "    const gxc_i64 yFrom = iy + {ph} - {kh} + 1, xFrom = ix + {pw} - {kw} + 1;\n"
      "    const gxc_i64 oy0 = yFrom > 0 ? (yFrom + {sh} - 1) / {sh} : 0;\n"
      "    const gxc_i64 ox0 = xFrom > 0 ? (xFrom + {sw} - 1) / {sw} : 0;\n"
      "    const gxc_i64 oyLast = (iy + {ph}) / {sh}, oxLast = (ix + {pw}) / {sw};\n"
      "    const gxc_i64 oy1 = oyLast < {outH} ? oyLast + 1 : {outH};\n"
      "    const gxc_i64 ox1 = oxLast < {outW} ? oxLast + 1 : {outW};\n"
      "    {real} sum = 0;\n"
      "    for (gxc_i64 oy = oy0; oy < oy1; ++oy) {{\n"
      "     for (gxc_i64 ox = ox0; ox < ox1; ++ox) {{\n"
      "      const gxc_i64 o = (plane * {outH} + oy) * {outW} + ox;\n"
      "{bounds}"
      "{take}"
      "     }}\n"
      "    }}\n"
      "    {store}\n"
      "  }}\n",
      poolArgs(g, {{"real", real},
                   {"bounds", windowBounds(g)},
                   {"take", take},
                   {"store", storeElement(op.result->type.dtype, "out", "i", "sum")}}));
  // Each input element visits ceil(k / s) windows per axis, each of k elements for max.
  const int64_t windows =
      ((g.kernelH + g.strideH - 1) / g.strideH) * ((g.kernelW + g.strideW - 1) / g.strideW);
  const int64_t work = windows * (op.kind == OpKind::MaxPool2dBackward ? g.kernelH * g.kernelW : 1);
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count, std::max<int64_t>(work, 1))};
}

}  // namespace

KernelBody poolKernel(const Op& op, const KernelArgs& args) {
  if (isPool2dBackward(op.kind)) return poolBackwardKernel(op, args);
  GXC_CHECK(isPool2d(op.kind), "layer '{}': {} is not a pool", op.layerName(), opName(op.kind));
  const PoolGeometry g = pool2dGeometry(op);
  const int64_t count = op.result->type.numel();
  const DType dtype = op.operands[0]->type.dtype;
  const std::string load =
      loadElement(dtype, fmt::format("in{}", args.indexOf(op.operands[0])), "at");
  const std::string real = computeType(dtype);  // float, or double for f64
  const bool max = op.kind == OpKind::MaxPool2d;
  // max_pool2d pads with -inf, so padding never wins; a NaN in the window wins, as in torch.
  // The NaN is kept aside so that the max is a select the host compiles without a branch (a
  // compare that picked the new value or kept the NaN branched on the data: 30 ns an output).
  const std::string start =
      max ? real + " best = gxc_neg_inf(); bool sawNaN = false;" : real + " sum = 0;";
  const std::string accumulate =
      max ? "best = v > best ? v : best; sawNaN |= v != v;" : "sum += v;";
  std::string value;
  if (max)
    value = fmt::format("sawNaN ? ({})gxc_nan() : best", real);
  else
    value = g.adaptive || !g.countIncludePad
                ? fmt::format("sum / ({})((y1 - y0) * (x1 - x0))", real)
                : fmt::format("sum / ({})((yPadEnd - yStart) * (xPadEnd - xStart))", real);
  std::string body = pointerDecls(args) + gridStrideLoop("i", count, "  ");
  body += fmt::vformat(
      "    const gxc_i64 ox = i % {outW}, oy = (i / {outW}) % {outH}, plane = i / ({outW} * "
      "{outH});\n"
      "{bounds}"
      "    {start}\n"
      "    for (gxc_i64 y = y0; y < y1; ++y) {{\n"
      "      for (gxc_i64 x = x0; x < x1; ++x) {{\n"
      "        const gxc_i64 at = (plane * {inH} + y) * {inW} + x;\n"
      "        const {real} v = {load};\n"
      "        {accumulate}\n"
      "      }}\n"
      "    }}\n"
      "    {store}\n"
      "  }}\n",
      poolArgs(g, {{"bounds", windowBounds(g)},
                   {"start", start},
                   {"load", load},
                   {"accumulate", accumulate},
                   {"real", real},
                   {"store", storeElement(op.result->type.dtype, "out", "i", value)}}));
  // On the host the blocks share the windows' reads (a window element is one unit of work),
  // so that a pool over more than one block's worth runs on every core.
  const int64_t windowWork =
      static_cast<int64_t>(pool2dWindowElements(g)) / std::max<int64_t>(count, 1);
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count, std::max<int64_t>(windowWork, 1))};
}

}  // namespace gxc::cuda
