// The attention kernel: F.scaled_dot_product_attention in one kernel, the scores never
// stored: FlashAttention's recurrence over tiles of keys.
//
// A block takes a group of query rows of one batch entry, one row per warp (on the host,
// where blockDim is 1, a group is one row and its warp one thread, which reads f32 K and V in
// place: with nothing to share, a copy would only cost). For each tile of kTileKeys
// keys, the block's threads together load the tile's K rows and V columns into shared memory
// once, for every query row of the group; then each lane of a row's warp takes every 32nd key
// of the tile and keeps an online softmax over its keys (the running max m, the sum of
// exp(score - m) and the value rows weighted by it, rescaled whenever m grows). At the end
// the warp merges its lanes' states with shuffles (gxc_warp_max, gxc_warp_sum). Output
// columns go in chunks of kChunk, so a lane's accumulator fits in registers and a V tile
// holds one chunk; a wider value dim recomputes the scores once per chunk. With is_causal the
// group stops at the last key its last row attends. A head dim so wide that one key's K row
// and V chunk pass kSharedBytes streams K and V from global memory instead. f64 computes in
// double throughout, its tiles included; the other dtypes in f32.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "codegen/cuda_emit.h"
#include "ir/diagnostic.h"

namespace gxc::cuda {
namespace {

constexpr int64_t kChunk = 64;
constexpr int64_t kTileKeys = 64;        // at most; fewer where the rows are wide
constexpr int64_t kSharedBytes = 32768;  // of the 48 KB a block may declare statically
constexpr int64_t kGpuRowsPerBlock = 4;  // warps per block on GPUs

}  // namespace

KernelBody attentionKernel(const Op& op, const KernelArgs& args) {
  const Value *q = op.operands[0], *k = op.operands[1], *v = op.operands[2];
  const Value* mask = op.operands.size() == 4 ? op.operands[3] : nullptr;
  const Shape& qs = q->type.shape;
  size_t rank = qs.size();
  int64_t queries = qs[rank - 2], width = qs[rank - 1];
  int64_t keys = k->type.shape[rank - 2], valueWidth = v->type.shape[rank - 1];
  int64_t rows = q->type.numel() / std::max<int64_t>(width, 1);
  int64_t batches = rows / std::max<int64_t>(queries, 1);
  int64_t chunk = std::min(kChunk, std::max<int64_t>(valueWidth, 1));
  double scale = op.attrs.getFloat("scale", 1.0 / std::sqrt(static_cast<double>(width)));
  bool causal = op.attrs.getBool("is_causal", false);
  auto in = [&](const Value* value) { return fmt::format("in{}", args.indexOf(value)); };
  const bool wide = q->type.dtype == DType::F64;
  const std::string real = wide ? "double" : "float", zero = wide ? "0.0" : "0.0f";
  const std::string exp = wide ? "exp" : "expf";
  const int64_t realBytes = wide ? 8 : 4;

  int64_t tileKeys = std::clamp<int64_t>(keys, 1, kTileKeys);
  while (tileKeys > 1 && tileKeys * (width + chunk) * realBytes > kSharedBytes) tileKeys /= 2;
  bool tiled = tileKeys * (width + chunk) * realBytes <= kSharedBytes;
  std::string kGlobal =
      fmt::format("(batch * {} + s) * {} + e", intLiteral(keys), intLiteral(width));
  std::string vGlobal =
      fmt::format("(batch * {} + s) * {} + e0 + e", intLiteral(keys), intLiteral(valueWidth));
  std::string kAt = tiled ? fmt::format("kRows[t * {} + e]", intLiteral(width))
                          : loadElement(k->type.dtype, in(k), kGlobal);
  std::string vAt = tiled ? "vRows[t * vStride + e]" : loadElement(v->type.dtype, in(v), vGlobal);
  // On the host one thread is the block: nothing shares a tile, so f32 and f64 K and V (stored
  // as they are computed) are read where they are rather than copied.
  bool inPlaceOnHost = k->type.dtype == v->type.dtype &&
                       (k->type.dtype == DType::F32 || k->type.dtype == DType::F64);

  // The score of key s (tile position t) for this row, with the causal mask or the mask.
  std::string score = fmt::format(
      "          {4} x = {5};\n"
      "          for (gxc_i64 e = 0; e < {0}; ++e) x += {1} * {2};\n"
      "          x *= {3};\n",
      intLiteral(width), loadElement(q->type.dtype, in(q), "qRow + e"), kAt,
      wide ? doubleLiteral(scale) : floatLiteral(static_cast<float>(scale)), real, zero);
  if (causal) score += "          if (s > l) x = gxc_neg_inf();\n";
  Shape rowShape(qs.begin(), qs.end() - 1);  // a row's coordinates c0, c1, ...: batch..., l
  std::string maskCoords;
  if (mask) {
    Shape scores = rowShape;
    scores.push_back(keys);
    std::string index = broadcastIndex(mask->type.shape, scores, "c");
    maskCoords = unravel("row", rowShape, "c", "    ", index);
    score += fmt::format("          const gxc_i64 c{} = s;\n", rank - 1);
    if (mask->type.dtype == DType::Bool)  // true attends
      score += fmt::format("          if (!{}) x = gxc_neg_inf();\n",
                           loadElement(DType::Bool, in(mask), index));
    else
      score += fmt::format("          x += {};\n", loadElement(mask->type.dtype, in(mask), index));
  }

  // The block's threads load the tile: K rows whole, V rows' current chunk of columns.
  std::string tileLoad;
  if (tiled) {
    tileLoad = fmt::format(
        "        const {4}* kRows = kTile;\n"
        "        const {4}* vRows = vTile;\n"
        "        gxc_i64 vStride = {2};\n"
        "        if (staged) {{\n"
        "          __syncthreads();  // every row is done with the previous tile\n"
        "          for (gxc_i64 i = threadIdx.x; i < tile * {0}; i += blockDim.x) {{\n"
        "            const gxc_i64 s = s0 + i / {0}, e = i % {0};\n"
        "            kTile[i] = {1};\n"
        "          }}\n"
        "          for (gxc_i64 i = threadIdx.x; i < tile * columns; i += blockDim.x) {{\n"
        "            const gxc_i64 s = s0 + i / columns, e = i % columns;\n"
        "            vTile[i / columns * {2} + e] = {3};\n"
        "          }}\n"
        "          __syncthreads();\n"
        "        }}",
        intLiteral(width), loadElement(k->type.dtype, in(k), kGlobal), intLiteral(chunk),
        loadElement(v->type.dtype, in(v), vGlobal), real);
    if (inPlaceOnHost)
      tileLoad += fmt::format(
          " else {{\n"
          "          kRows = {0} + (batch * {1} + s0) * {2};\n"
          "          vRows = {3} + (batch * {1} + s0) * {4} + e0;\n"
          "          vStride = {4};\n"
          "        }}",
          in(k), intLiteral(keys), intLiteral(width), in(v), intLiteral(valueWidth));
    tileLoad += "\n";
  }
  std::string sharedDecls =
      tiled
          ? fmt::format(
                "  __shared__ {0} kTile[{1}];\n  __shared__ {0} vTile[{2}];\n"
                "  const bool staged = {3};\n",
                real, tileKeys * width, tileKeys * chunk, inPlaceOnHost ? "blockDim.x > 1" : "true")
          : "";
  // With is_causal, no row of the group attends a key past its last row's position.
  std::string attended = causal
                             ? fmt::format("l0 + warps < {0} ? l0 + warps : {0}", intLiteral(keys))
                             : intLiteral(keys);

  std::string body =
      pointerDecls(args) + sharedDecls +
      fmt::format(
          "  const gxc_i64 lanes = blockDim.x < 32 ? blockDim.x : 32;\n"
          "  const gxc_i64 warps = blockDim.x / lanes;\n"
          "  const gxc_i64 warp = threadIdx.x / lanes, lane = threadIdx.x % lanes;\n"
          "  const gxc_i64 groupsPerBatch = ({1} + warps - 1) / warps;\n"
          "  for (gxc_i64 group = blockIdx.x; group < {0} * groupsPerBatch;\n"
          "       group += gridDim.x) {{\n"
          "    const gxc_i64 batch = group / groupsPerBatch;\n"
          "    const gxc_i64 l0 = group % groupsPerBatch * warps, l = l0 + warp;\n"
          "    const bool active = l < {1};  // a warp past the last row still loads tiles\n"
          "    const gxc_i64 row = batch * {1} + l;\n"
          "    const gxc_i64 qRow = row * {2};\n"
          "{3}"
          "    const gxc_i64 attended = {4};\n"
          "    for (gxc_i64 e0 = 0; e0 < {5}; e0 += {6}) {{\n"
          "      const gxc_i64 columns = {5} - e0 < {6} ? {5} - e0 : {6};\n"
          "      {12} m = gxc_neg_inf(), sum = {13}, acc[{6}];\n"
          "      for (gxc_i64 e = 0; e < columns; ++e) acc[e] = {13};\n"
          "      for (gxc_i64 s0 = 0; s0 < attended; s0 += {7}) {{\n"
          "        const gxc_i64 tile = attended - s0 < {7} ? attended - s0 : {7};\n"
          "{8}"
          "        if (!active) continue;\n"
          "        for (gxc_i64 t = lane; t < tile; t += lanes) {{\n"
          "          const gxc_i64 s = s0 + t;\n"
          "{9}"
          "          if (x == gxc_neg_inf()) continue;  // attends nothing: weight 0\n"
          "          if (x > m) {{\n"
          "            const {12} shrink = {14}(m - x);\n"
          "            sum *= shrink;\n"
          "            for (gxc_i64 e = 0; e < columns; ++e) acc[e] *= shrink;\n"
          "            m = x;\n"
          "          }}\n"
          "          const {12} p = {14}(x - m);\n"
          "          sum += p;\n"
          "          for (gxc_i64 e = 0; e < columns; ++e) acc[e] += p * {10};\n"
          "        }}\n"
          "      }}\n"
          "      const {12} rowMax = gxc_warp_max(m);\n"
          "      const {12} mine = m == gxc_neg_inf() ? {13} : {14}(m - rowMax);\n"
          "      const {12} total = gxc_warp_sum(sum * mine);\n"
          "      for (gxc_i64 e = 0; e < columns; ++e) {{\n"
          "        const {12} o = gxc_warp_sum(acc[e] * mine);\n"
          "        // A row whose every key is masked out is NaN, as softmax over all -inf is.\n"
          "        if (active && lane == 0) {11}\n"
          "      }}\n"
          "    }}\n"
          "  }}\n",
          intLiteral(batches), intLiteral(queries), intLiteral(width), maskCoords, attended,
          intLiteral(valueWidth), chunk, tiled ? tileKeys : keys, tileLoad, score, vAt,
          storeElement(op.result->type.dtype, "out",
                       fmt::format("row * {} + e0 + e", intLiteral(valueWidth)),
                       fmt::format("rowMax == gxc_neg_inf() ? ({})gxc_nan() : o / total", real)),
          real, zero, exp);
  int64_t rowsPerBlock = std::clamp<int64_t>(queries, 1, kGpuRowsPerBlock);
  int64_t groups = batches * ((queries + rowsPerBlock - 1) / rowsPerBlock);
  LaunchShape gpu{std::clamp<int64_t>(groups, 1, kGpuMaxGrid), 32 * rowsPerBlock};
  return {"attention", std::move(body), gpu, hostRowLaunch(rows, keys * (width + valueWidth))};
}

}  // namespace gxc::cuda
