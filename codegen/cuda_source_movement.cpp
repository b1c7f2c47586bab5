// Data movement kernels: transpose, slice (off axis 0 or with a step: otherwise a slice is a
// view), concat, embedding, expand, triu and tril. One thread per element of the result, which is
// copied bit for bit from where it comes from, as raw 2-, 4- or 8-byte words: integers and f16 move
// unchanged.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::cuda {
namespace {

// The shortest last dim a gather runs in runs of (gatherBody): below it, a loop per run costs
// more than the divisions it saves.
constexpr int64_t kGatherRun = 8;

// `code`, every line indented two spaces more.
std::string indentedTwoMore(const std::string& code) {
  std::string out;
  for (size_t begin = 0; begin < code.size();) {
    size_t end = code.find('\n', begin);
    end = end == std::string::npos ? code.size() : end + 1;
    out += "  " + code.substr(begin, end - begin);
    begin = end;
  }
  return out;
}

// One result element per iteration, `gather` (which reads the coordinates c0, c1, ...) copying
// it. Where the last dim is long enough, in runs of it: the other coordinates are found once
// per run (a division each), the last one is the run's counter, and the run vectorizes on the
// host. A `contiguous` run (a transpose that keeps the last dim, a slice off it) does at any
// size: it is a copy, quick to build, which in vectors took a transpose of gpt_decoder's
// 8,192-float heads from 2.8 us to 1.1 us on one core; a run that gathers vectorizes from
// kHostSimdElements on, as elementwise loops do.
KernelBody gatherBody(const Op& op, const KernelArgs& args, const std::string& gather,
                      bool contiguous) {
  const Shape& shape = op.result->type.shape;
  const int64_t count = op.result->type.numel();
  const bool simd = contiguous || count >= kHostSimdElements;
  LaunchShape host = hostElementwiseLaunch(count);
  std::string body = pointerDecls(args, /*bits=*/true);
  const int64_t run = shape.empty() ? 0 : shape.back();
  if (shape.size() >= 2 && run >= kGatherRun && run <= std::numeric_limits<int>::max()) {
    const size_t last = shape.size() - 1;
    const Shape outer(shape.begin(), shape.end() - 1);
    const int64_t runs = count / run;
    host.grid = std::max<int64_t>(1, std::min(host.grid, runs));  // runs is 0 for an empty result
    std::string inner = fmt::format("      const gxc_i64 i = o * {} + j;\n", intLiteral(run)) +
                        fmt::format("      const gxc_i64 c{} = j;\n", last) +
                        indentedTwoMore(gather);
    body +=
        fmt::format("  GXC_RUNS(o, j, {}, {}) {{\n", intLiteral(runs), intLiteral(run)) +
        unravel("o", outer, "c", "    ", gather) +
        fmt::format("    {}(j, {}) {{\n", simd ? "GXC_RUN" : "GXC_RUN_SCALAR", intLiteral(run)) +
        inner + "    }\n  }\n";
  } else {
    body += gridStrideLoop("i", count, "  ") + unravel("i", shape, "c", "    ", gather) + gather +
            "  }\n";
  }
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count), host};
}

std::string sumOfTerms(const std::vector<std::string>& terms) {
  if (terms.empty()) return "0";
  std::string out = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) out += " + " + terms[i];
  return out;
}

KernelBody transposeKernel(const Op& op, const KernelArgs& args) {
  const Shape& in = op.operands[0]->type.shape;
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm;
  if (auto given = op.attrs.getIntList("perm"))
    for (int64_t p : *given) perm.push_back(*normalizeAxis(p, rank));
  else
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  // Result dim d is input dim perm[d].
  std::vector<int64_t> strides = rowMajorStrides(in);
  std::vector<std::string> terms;
  for (size_t d = 0; d < perm.size(); ++d)
    if (in[perm[d]] != 1) terms.push_back(fmt::format("c{} * {}", d, intLiteral(strides[perm[d]])));
  const bool keepsLast = !perm.empty() && strides[perm.back()] == 1;
  return gatherBody(op, args, fmt::format("    out[i] = in1[{}];\n", sumOfTerms(terms)), keepsLast);
}

KernelBody sliceKernel(const Op& op, const KernelArgs& args) {
  const Shape& in = op.operands[0]->type.shape;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), static_cast<int64_t>(in.size()));
  int64_t start = op.attrs.getInt("start", 0), step = op.attrs.getInt("step", 1);
  std::vector<int64_t> strides = rowMajorStrides(in);
  std::vector<std::string> terms;
  for (size_t d = 0; d < in.size(); ++d) {
    std::string coord = fmt::format("c{}", d);
    if (static_cast<int64_t>(d) == axis && step != 1)
      coord = fmt::format("c{} * {}", d, intLiteral(step));
    if (static_cast<int64_t>(d) == axis && start != 0)
      coord = fmt::format("({} + {})", coord, intLiteral(start));
    if (in[d] != 1) terms.push_back(fmt::format("{} * {}", coord, intLiteral(strides[d])));
  }
  const bool stepsAlongLast = axis + 1 == static_cast<int64_t>(in.size()) && step != 1;
  return gatherBody(op, args, fmt::format("    out[i] = in1[{}];\n", sumOfTerms(terms)),
                    !stepsAlongLast);
}

// x's dims align with the result's last ones; a dim of x of size 1 is read at 0 (broadcast).
KernelBody expandKernel(const Op& op, const KernelArgs& args) {
  const Shape& in = op.operands[0]->type.shape;
  const Shape& out = op.result->type.shape;
  const bool keepsLast = !in.empty() && in.back() == out.back();
  return gatherBody(op, args, fmt::format("    out[i] = in1[{}];\n", broadcastIndex(in, out, "c")),
                    keepsLast);
}

// Element (r, c) of each matrix of the last two dims is kept where c - r >= diagonal (triu)
// or c - r <= diagonal (tril), else 0: all-zero bits, which is 0 in every dtype.
KernelBody triangleKernel(const Op& op, const KernelArgs& args) {
  const Shape& shape = op.result->type.shape;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  std::string keep = fmt::format(
      "i % {1} - i / {1} % {0} {2} {3}", intLiteral(rows), intLiteral(cols),
      op.kind == OpKind::Triu ? ">=" : "<=", intLiteral(op.attrs.getInt("diagonal", 0)));
  int64_t count = op.result->type.numel();
  std::string body = pointerDecls(args, /*bits=*/true) + gridStrideLoop("i", count, "  ") +
                     fmt::format("    out[i] = {} ? in1[i] : ({})0;\n  }}\n", keep,
                                 bitsType(op.result->type.dtype));
  return {std::string(opName(op.kind)), std::move(body), gpuElementwiseLaunch(count),
          hostElementwiseLaunch(count)};
}

KernelBody concatKernel(const Op& op, const KernelArgs& args) {
  const Shape& out = op.result->type.shape;
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), static_cast<int64_t>(out.size()));
  // Operand k covers [offset, offset + its size) along the axis.
  std::string gather;
  int64_t offset = 0;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const Shape& in = op.operands[k]->type.shape;
    std::vector<int64_t> strides = rowMajorStrides(in);
    std::vector<std::string> terms;
    for (size_t d = 0; d < in.size(); ++d) {
      std::string coord = static_cast<int64_t>(d) == axis && offset != 0
                              ? fmt::format("(c{} - {})", d, intLiteral(offset))
                              : fmt::format("c{}", d);
      if (in[d] != 1) terms.push_back(fmt::format("{} * {}", coord, intLiteral(strides[d])));
    }
    offset += in[axis];
    bool last = k + 1 == op.operands.size();
    std::string condition = last ? "" : fmt::format("if (c{} < {}) ", axis, intLiteral(offset));
    gather += fmt::format("    {}{}out[i] = in{}[{}];\n", k == 0 ? "" : "else ", condition,
                          args.indexOf(op.operands[k]), sumOfTerms(terms));
  }
  // Along the last axis a run crosses from one operand to the next.
  return gatherBody(op, args, gather, axis + 1 != static_cast<int64_t>(out.size()));
}

KernelBody embeddingKernel(const Op& op, const KernelArgs& args) {
  const Value* indices = op.operands[0];
  const Value* weight = op.operands[1];
  int64_t rows = weight->type.shape[0], dim = weight->type.shape[1];
  int64_t count = op.result->type.numel();
  // The executor checks the indices before it launches (an index out of range is the user's
  // error, reported with the layer); here an index out of range reads nothing and yields NaN.
  DType dtype = weight->type.dtype;
  std::string nanBits = dtype == DType::F16    ? "0x7e00u"
                        : dtype == DType::BF16 ? "0x7fc0u"
                        : dtype == DType::F64  ? "0x7ff8000000000000ull"
                                               : "0x7fc00000u";
  std::string body = fmt::format("  {0}* out = ({0}*)args.p[0];\n", bitsType(weight->type.dtype)) +
                     fmt::format("  const {0}* in{1} = (const {0}*)args.p[{1}];\n",
                                 storageType(indices->type.dtype), args.indexOf(indices)) +
                     fmt::format("  const {0}* in{1} = (const {0}*)args.p[{1}];\n",
                                 bitsType(weight->type.dtype), args.indexOf(weight));
  if (dim < kGatherRun || dim > std::numeric_limits<int>::max()) {
    body += gridStrideLoop("i", count, "  ") +
            fmt::format(
                "    const gxc_i64 row = (gxc_i64)in{0}[i / {2}];\n"
                "    out[i] = row >= 0 && row < {3} ? in{1}[row * {2} + i % {2}] : ({4}){5};\n"
                "  }}\n",
                args.indexOf(indices), args.indexOf(weight), intLiteral(dim), intLiteral(rows),
                bitsType(weight->type.dtype), nanBits);
    return {"embedding", std::move(body), gpuElementwiseLaunch(count),
            hostElementwiseLaunch(count)};
  }
  const int64_t runs = count / dim;
  body +=
      // In runs of a row: the index read once per row and the row copied in vectors on the
      // host (on GPUs each thread reads its element's index, as GXC_RUNS does).
      fmt::format(
          "  GXC_RUNS(o, j, {6}, {2}) {{\n"
          "    const gxc_i64 row = (gxc_i64)in{0}[o];\n"
          "    if (row >= 0 && row < {3}) {{\n"
          "      GXC_RUN(j, {2}) out[o * {2} + j] = in{1}[row * {2} + j];\n"
          "    }} else {{\n"
          "      GXC_RUN(j, {2}) out[o * {2} + j] = ({4}){5};\n"
          "    }}\n"
          "  }}\n",
          args.indexOf(indices), args.indexOf(weight), intLiteral(dim), intLiteral(rows),
          bitsType(weight->type.dtype), nanBits, intLiteral(runs));
  LaunchShape host = hostElementwiseLaunch(count);
  host.grid = std::max<int64_t>(1, std::min(host.grid, runs));  // runs is 0 for no indices
  return {"embedding", std::move(body), gpuElementwiseLaunch(count), host};
}

}  // namespace

KernelBody movementKernel(const Op& op, const KernelArgs& args) {
  switch (op.kind) {
    case OpKind::Transpose:
      return transposeKernel(op, args);
    case OpKind::Slice:
      return sliceKernel(op, args);
    case OpKind::Concat:
      return concatKernel(op, args);
    case OpKind::Expand:
      return expandKernel(op, args);
    case OpKind::Triu:
    case OpKind::Tril:
      return triangleKernel(op, args);
    case OpKind::Embedding:
      return embeddingKernel(op, args);
    default:
      GXC_CHECK(false, "layer '{}': {} is not a data movement kernel", op.layerName(),
                opName(op.kind));
  }
  return {};
}

}  // namespace gxc::cuda
