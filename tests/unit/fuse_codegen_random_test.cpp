// fuse and codegen agree: every kernel the fuse pass forms on random graphs is generated,
// built for the host and run (HostExecutor with HostKernels::Cpu), and its outputs match the
// reference interpreter's on the graph before fusion. A pattern fuse can form that codegen
// cannot handle fails here, as an internal error or as a wrong number.
//
// The graphs are made of random *islands*, independent subgraphs with inputs of their own.
// An island has one dtype (f32, f16 or bf16) and one base shape F (rank 1 to 3); its ops
// are elementwise (unary, binary with NumPy broadcasting, with a `scalar`; the 1.1 unary ops,
// minimum, maximum, clamp, pow, and where and masked_fill on comparisons), the anchors (sum,
// mean and max over any axes, keepdim or not; softmax and log_softmax along any axis;
// layer_norm with or without weight and bias) and their results broadcast back, so fuse
// forms prologues, tails of the anchor's shape and tails broadcast over the rows. Many
// islands go into one graph, so one host compile (cached on disk, keyed by the text) builds
// the kernels of many: the test's time is mostly that compile.
//
// Values are kept finite: a bound on every value's magnitude is tracked, and an op whose
// result could exceed it is not made (exp, log and sqrt only in forms that cannot overflow or
// take a negative), so no inf or NaN hides a difference or makes a spurious one.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "ir/fused_kernel.h"
#include "ir/infer_type.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/fuse.h"
#include "passes/plan_memory.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"

namespace gxc {
namespace {

struct Bounded {
  Value* value;
  double bound;  // |value| stays below this, for inputs up to 5 in magnitude
};

class IslandMaker {
 public:
  IslandMaker(Graph& graph, std::mt19937& random) : graph_(graph), random_(random) {}

  // Appends island `prefix` to the graph; returns the names of the outputs it added.
  std::vector<std::string> append(const std::string& prefix) {
    prefix_ = prefix;
    values_.clear();
    next_ = 0;
    int dtype = pick(8);
    dtype_ = dtype < 6 ? DType::F32 : dtype == 6 ? DType::F16 : DType::BF16;
    // Half precision rounds each value the reference stores, which the fused kernels do not
    // do between members: short islands keep that difference small.
    limit_ = dtype_ == DType::F32 ? 1e3 : 30;
    int rank = 1 + pick(3);
    for (int d = 0; d < rank; ++d) full_.push_back(d + 1 == rank ? 2 + pick(7) : 1 + pick(5));
    values_.push_back({input("x", full_), 5});
    values_.push_back({input("y", full_), 5});
    Shape partial = full_;  // a broadcast operand: some dims 1, maybe fewer leading dims
    for (int64_t& dim : partial)
      if (pick(2)) dim = 1;
    partial.erase(partial.begin(), partial.begin() + pick(static_cast<int>(partial.size())));
    values_.push_back({input("b", partial), 5});
    int ops = 1 + pick(dtype_ == DType::F32 ? 16 : 6);
    for (int i = 0; i < ops; ++i) step();
    std::vector<std::string> outputs = {prefix + "out"};
    graph_.addOutput(outputs[0], values_.back().value);
    if (values_.size() > 4 && pick(2)) {
      outputs.push_back(prefix + "other");
      graph_.addOutput(outputs[1], values_[values_.size() - 2].value);
    }
    full_.clear();
    return outputs;
  }

  DType dtype() const { return dtype_; }

 private:
  int pick(int count) { return std::uniform_int_distribution<int>(0, count - 1)(random_); }

  Value* input(const std::string& name, const Shape& shape) {
    return graph_.addInput(prefix_ + name, TensorType::of(dtype_, shape, Device::cpu()));
  }

  // One of the latest values: chains and trees rather than a fan of unrelated ops.
  const Bounded& recent() {
    int window = std::min<int>(static_cast<int>(values_.size()), 4);
    return values_[values_.size() - 1 - static_cast<size_t>(pick(window))];
  }

  // The op, typed by the shape rules, or null when they refuse it or its bound is too large.
  Value* make(OpKind kind, std::vector<Value*> operands, double bound, Attrs attrs = {}) {
    if (bound > limit_) return nullptr;
    std::string name = prefix_ + "v" + std::to_string(next_++);
    Op* op = graph_.appendOp(kind, std::move(operands), name,
                             TensorType::of(dtype_, {}, Device::cpu()), std::move(attrs));
    try {
      op->result->type = inferResultType(*op);
    } catch (const Error&) {
      graph_.eraseOp(op);
      return nullptr;
    }
    // Broadcasting stays within a few times the island's size, as a transformer's would.
    if (op->result->type.numel() > 4 * checkedNumel(full_).value()) {
      graph_.eraseOp(op);
      return nullptr;
    }
    values_.push_back({op->result, bound});
    return op->result;
  }

  Value* unary(OpKind kind, const Bounded& a, double bound, Attrs attrs = {}) {
    return make(kind, {a.value}, bound, std::move(attrs));
  }

  void step() {
    const Bounded a = recent();
    const Bounded b = pick(3) ? recent() : values_[static_cast<size_t>(pick(3))];
    Attrs attrs;
    const TensorType& type = a.value->type;
    switch (pick(15)) {
      case 0: {
        const OpKind kinds[] = {OpKind::Relu, OpKind::Neg, OpKind::Gelu};
        OpKind kind = kinds[pick(3)];
        if (kind == OpKind::Gelu && pick(2)) attrs.set("approximate", std::string("tanh"));
        unary(kind, a, a.bound, attrs);
        break;
      }
      case 1:
        unary(pick(2) ? OpKind::Tanh : OpKind::Sigmoid, a, 1.0);
        break;
      case 2:
      case 3: {
        const OpKind kinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul};
        OpKind kind = kinds[pick(3)];
        make(kind, {a.value, b.value}, kind == OpKind::Mul ? a.bound * b.bound : a.bound + b.bound);
        break;
      }
      case 4: {
        const OpKind kinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div};
        OpKind kind = kinds[pick(4)];
        double scalar = std::vector<double>{0.5, -1.25, 3.0}[static_cast<size_t>(pick(3))];
        attrs.set("scalar", scalar);
        double bound = kind == OpKind::Mul   ? a.bound * std::abs(scalar)
                       : kind == OpKind::Div ? a.bound / std::abs(scalar)
                                             : a.bound + std::abs(scalar);
        unary(kind, a, bound, attrs);
        break;
      }
      case 5: {  // exp and log where they cannot overflow: exp(tanh a), log(sigmoid a)
        if (pick(2)) {
          if (Value* t = unary(OpKind::Tanh, a, 1.0)) make(OpKind::Exp, {t}, 3.0);
        } else if (Value* s = unary(OpKind::Sigmoid, a, 1.0)) {
          make(OpKind::Log, {s}, a.bound + 1.0);
        }
        break;
      }
      case 6: {  // a / sqrt(b * b + 1): a normalization, positive under the sqrt
        Value* square = make(OpKind::Mul, {b.value, b.value}, b.bound * b.bound);
        attrs.set("scalar", 1.0);
        Value* shifted =
            square ? make(OpKind::Add, {square}, b.bound * b.bound + 1, attrs) : nullptr;
        Value* root = shifted ? make(OpKind::Sqrt, {shifted}, b.bound + 1) : nullptr;
        if (root) make(OpKind::Div, {a.value, root}, a.bound);
        break;
      }
      case 7:
      case 8: {
        if (type.rank() == 0) break;
        const OpKind kinds[] = {OpKind::Sum, OpKind::Mean, OpKind::Max};
        OpKind kind = kinds[pick(3)];
        std::vector<int64_t> axes;
        for (int64_t d = 0; d < type.rank(); ++d)
          if (pick(2)) axes.push_back(pick(2) ? d : d - type.rank());
        std::shuffle(axes.begin(), axes.end(), random_);
        int64_t folded = 1;
        for (int64_t d = 0; d < type.rank(); ++d)
          if (axes.empty() || std::count(axes.begin(), axes.end(), d) ||
              std::count(axes.begin(), axes.end(), d - type.rank()))
            folded *= type.shape[static_cast<size_t>(d)];
        if (axes.size() == 1)
          attrs.set("axis", axes[0]);
        else if (!axes.empty())
          attrs.set("axis", axes);
        attrs.set("keepdim", static_cast<bool>(pick(2)));
        Value* reduced = unary(
            kind, a, kind == OpKind::Sum ? a.bound * static_cast<double>(folded) : a.bound, attrs);
        // Often read back against a full-size value: a tail broadcast over the rows.
        if (reduced && pick(2))
          make(OpKind::Sub, {a.value, reduced},
               a.bound * (kind == OpKind::Sum ? static_cast<double>(folded) + 1 : 2.0));
        break;
      }
      case 9:
      case 10: {
        if (type.rank() == 0) break;
        attrs.set("axis",
                  static_cast<int64_t>(pick(static_cast<int>(2 * type.rank()))) - type.rank());
        if (pick(2))
          unary(OpKind::Softmax, a, 1.0, attrs);
        else  // log_softmax >= -(the row's range + log of its length)
          unary(OpKind::LogSoftmax, a, 2 * a.bound + std::log(static_cast<double>(type.numel())),
                attrs);
        break;
      }
      case 11: {
        if (type.rank() == 0) break;
        std::vector<Value*> operands = {a.value};
        int affine = pick(3);  // none, weight, weight and bias
        Shape last = {type.shape.back()};
        if (affine >= 1) operands.push_back(input("w" + std::to_string(next_), last));
        if (affine == 2) operands.push_back(input("c" + std::to_string(next_), last));
        // layer_norm magnifies a difference in its input by up to 1/sqrt(eps) where the row is
        // nearly constant (a saturated tanh upstream makes such rows): eps 1e-5 would turn the
        // last-bit differences of tanhf and std::tanh into 1e-5 at the output.
        attrs.set("eps", pick(2) ? 1e-3 : 0.1);
        // A normalized value is below sqrt(n) in magnitude.
        double bound = std::sqrt(static_cast<double>(type.shape.back()) + 1);
        make(OpKind::LayerNorm, operands, affine == 0 ? bound : bound * 5 + 5, attrs);
        break;
      }
      case 12:
        smoothUnary(a);
        break;
      case 13:
        minimumMaximumOrClamp(a, b);
        break;
      case 14:
        selection(a, b);
        break;
    }
  }

  // The 1.1 unary ops that are continuous (floor, round and sign are not: a last-bit
  // difference upstream could move their result by a whole unit).
  void smoothUnary(const Bounded& a) {
    Attrs attrs;
    switch (pick(11)) {
      case 0:
        unary(OpKind::Abs, a, a.bound);
        break;
      case 1:
        unary(pick(2) ? OpKind::Sin : OpKind::Cos, a, 1.0);
        break;
      case 2:
        unary(OpKind::Erf, a, 1.0);
        break;
      case 3:
        unary(OpKind::Silu, a, a.bound);
        break;
      case 4:
        unary(OpKind::Hardsigmoid, a, 1.0);
        break;
      case 5:
        unary(OpKind::Hardswish, a, a.bound);
        break;
      case 6:
        if (pick(2)) attrs.set("negative_slope", 0.2);
        unary(OpKind::LeakyRelu, a, a.bound, attrs);
        break;
      case 7: {
        double alpha = pick(2) ? 1.0 : 0.5;
        attrs.set("alpha", alpha);
        unary(OpKind::Elu, a, std::max(a.bound, alpha), attrs);
        break;
      }
      case 8: {  // softplus(x) <= |x| + log(2) / beta
        attrs.set("beta", pick(2) ? 1.0 : 2.0);
        attrs.set("threshold", pick(2) ? 20.0 : 2.0);
        unary(OpKind::Softplus, a, a.bound + 1.0, attrs);
        break;
      }
      case 9:
        attrs.set("scalar", 2.0);
        unary(OpKind::Pow, a, a.bound * a.bound, attrs);
        break;
      case 10: {  // pow(|a| + 1, b) with |b| <= 1: a positive base, a bounded result
        Attrs one;
        one.set("scalar", 1.0);
        Value* magnitude = unary(OpKind::Abs, a, a.bound);
        Value* base = magnitude ? make(OpKind::Add, {magnitude}, a.bound + 1, one) : nullptr;
        Value* exponent =
            base ? unary(OpKind::Tanh, values_[static_cast<size_t>(pick(3))], 1.0) : nullptr;
        if (exponent) make(OpKind::Pow, {base, exponent}, a.bound + 1);
        break;
      }
    }
  }

  void minimumMaximumOrClamp(const Bounded& a, const Bounded& b) {
    Attrs attrs;
    OpKind kind = pick(2) ? OpKind::Minimum : OpKind::Maximum;
    switch (pick(3)) {
      case 0:
        make(kind, {a.value, b.value}, std::max(a.bound, b.bound));
        break;
      case 1:
        attrs.set("scalar", -0.5);
        unary(kind, a, a.bound + 0.5, attrs);
        break;
      case 2: {
        int bounds = pick(3);  // min, max or both
        if (bounds != 1) attrs.set("min", -1.5);
        if (bounds != 0) attrs.set("max", 2.0);
        unary(OpKind::Clamp, a, a.bound, attrs);
        break;
      }
    }
  }

  // where and masked_fill, with their bool conditions. A comparison is continuous only where
  // it cannot flip: where(a > b, a, b) is max(a, b) either way, and comparisons of the
  // island's inputs are exact. The bool values are not left for later ops to pick up.
  void selection(const Bounded& a, const Bounded& b) {
    bool ofInputs = pick(2);
    const Bounded& left = ofInputs ? values_[0] : a;
    const Bounded& right = ofInputs ? values_[1] : b;
    const OpKind comparisons[] = {OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge};
    OpKind comparison = ofInputs ? comparisons[pick(4)] : OpKind::Gt;
    Value* condition = make(comparison, {left.value, right.value}, 1.0);
    if (!condition) return;
    values_.pop_back();
    if (ofInputs && pick(2)) {
      Value* other = pick(2) ? make(OpKind::LogicalNot, {condition}, 1.0) : nullptr;
      if (other) values_.pop_back();
      Attrs attrs;
      attrs.set("value", -0.75);
      make(OpKind::MaskedFill, {a.value, other ? other : condition}, a.bound + 1, attrs);
    } else {
      make(OpKind::Where, {condition, a.value, b.value}, std::max(a.bound, b.bound));
    }
  }

  Graph& graph_;
  std::mt19937& random_;
  std::string prefix_;
  DType dtype_ = DType::F32;
  double limit_ = 0;
  Shape full_;
  std::vector<Bounded> values_;
  int next_ = 0;
};

// What the fused kernels of a graph contain, to show the test covers the patterns it is for.
struct Coverage {
  int kernels = 0, withAnchor = 0, withPrologue = 0, broadcastTails = 0, halfPrecision = 0;
  int withOnePointOneOps = 0, withSelection = 0;  // format 1.1's elementwise ops; where, fill
};

bool isOnePointOneElementwise(OpKind kind) {
  switch (kind) {
    case OpKind::Abs:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Erf:
    case OpKind::Silu:
    case OpKind::Hardsigmoid:
    case OpKind::Hardswish:
    case OpKind::LeakyRelu:
    case OpKind::Elu:
    case OpKind::Softplus:
    case OpKind::Pow:
    case OpKind::Minimum:
    case OpKind::Maximum:
    case OpKind::Clamp:
    case OpKind::Where:
    case OpKind::MaskedFill:
      return true;
    default:
      return false;
  }
}

void count(const Graph& graph, Coverage& coverage) {
  for (const KernelSpan& span : kernelSpans(graph)) {
    ++coverage.kernels;
    std::vector<const Op*> members(
        graph.ops().begin() + static_cast<std::ptrdiff_t>(span.first),
        graph.ops().begin() + static_cast<std::ptrdiff_t>(span.last) + 1);
    const Op* root = members.back();
    if (root->result->type.dtype != DType::F32) ++coverage.halfPrecision;
    auto has = [&](auto predicate) {
      return std::any_of(members.begin(), members.end(), predicate);
    };
    if (has([](const Op* op) { return isOnePointOneElementwise(op->kind); }))
      ++coverage.withOnePointOneOps;
    if (has([](const Op* op) {
          return op->kind == OpKind::Where || op->kind == OpKind::MaskedFill;
        }))
      ++coverage.withSelection;
    for (const Op* op : members) {
      if (kernelRole(*op) != KernelRole::Anchor) continue;
      ++coverage.withAnchor;
      const Op* input = op->operands[0]->producer;
      if (input && kernelOf(*input) == span.name) ++coverage.withPrologue;
      if (root->result->type.numel() > op->result->type.numel()) ++coverage.broadcastTails;
    }
  }
}

// The largest difference, relative to the output's largest magnitude (at least 1): sums and
// normalizations round relative to their terms, not to their result. Infinite for a NaN.
double normwiseError(const Tensor& actual, const Tensor& expected) {
  if (actual.shape() != expected.shape()) return INFINITY;
  double largest = 1;
  for (int64_t i = 0; i < expected.numel(); ++i)
    largest = std::max(largest, std::abs(static_cast<double>(expected.loadFloat(i))));
  double worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double error = std::abs(static_cast<double>(actual.loadFloat(i)) - expected.loadFloat(i));
    worst = std::isnan(error) ? INFINITY : std::max(worst, error / largest);
  }
  return worst;
}

// The lines of the graph's text that belong to island `prefix` (its ops name it).
std::string islandText(const Graph& graph, const std::string& prefix) {
  std::string text = printGraph(graph), lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, end - at);
    if (line.find("%" + prefix) != std::string::npos) lines += line + "\n";
    at = end + 1;
  }
  return lines;
}

TEST(FuseCodegenRandomTest, FusedKernelsOfRandomGraphsComputeTheReferencesAnswers) {
  std::mt19937 random(7);
  Coverage coverage;
  constexpr int kGraphs = 4, kIslandsPerGraph = 80;
  for (int g = 0; g < kGraphs; ++g) {
    Graph graph("islands" + std::to_string(g));
    IslandMaker maker(graph, random);
    std::map<std::string, std::pair<std::string, double>> islandAndTolerance;  // by output
    for (int island = 0; island < kIslandsPerGraph; ++island) {
      std::string prefix = "i" + std::to_string(island) + "_";
      // The tolerances of docs/architecture.md (Generated kernels). f32: the kernels round as
      // the reference does, up to the order of sums; f16 and bf16: the reference also rounds
      // every member's result, by up to 2^-11 and 2^-8, which the fused kernel keeps in f32.
      for (const std::string& output : maker.append(prefix))
        islandAndTolerance[output] = {prefix, maker.dtype() == DType::F32 ? 1e-5 : 1e-2};
    }
    ASSERT_EQ(verifyGraph(graph), std::vector<std::string>{});
    std::map<std::string, Tensor> inputs;
    for (const Value* input : graph.inputs()) inputs[input->name] = defaultInput(graph, *input, g);
    std::map<std::string, Tensor> expected = ReferenceExecutor(graph).run(inputs);

    FusePass().run(graph, PassContext{});
    PlanMemoryPass().run(graph, PassContext{});
    std::vector<std::string> problems = verifyGraph(graph);
    ASSERT_EQ(problems, std::vector<std::string>{});
    count(graph, coverage);
    // On the host's one thread per block, and as a GPU launches it (every thread of 128 per
    // block emulated, with the memory checks), but in sanitizer builds, whose runtimes do not
    // follow the emulation's fibers (scripts/test.sh).
    std::vector<HostLaunchMode> launches{HostLaunchMode{}};
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    launches.push_back(HostLaunchMode{true, 128});
#endif
    for (HostLaunchMode launch : launches) {
      std::map<std::string, Tensor> actual = HostExecutor(graph, launch).run(inputs);
      for (const auto& [name, want] : expected) {
        const auto& [island, tolerance] = islandAndTolerance.at(name);
        double error = normwiseError(actual.at(name), want);
        EXPECT_LE(error, tolerance)
            << "output " << name << (launch.emulateBlocks ? " (emulated)" : "") << ", fused:\n"
            << islandText(graph, island);
      }
    }
  }
  RecordProperty("kernels", coverage.kernels);
  RecordProperty("with_anchor", coverage.withAnchor);
  RecordProperty("with_prologue", coverage.withPrologue);
  RecordProperty("broadcast_tails", coverage.broadcastTails);
  RecordProperty("half_precision", coverage.halfPrecision);
  RecordProperty("with_1_1_ops", coverage.withOnePointOneOps);
  RecordProperty("with_selection", coverage.withSelection);
  EXPECT_GT(coverage.kernels, 300);
  EXPECT_GT(coverage.withAnchor, 100);
  EXPECT_GT(coverage.withPrologue, 30);
  EXPECT_GT(coverage.broadcastTails, 30);
  EXPECT_GT(coverage.halfPrecision, 20);
  EXPECT_GT(coverage.withOnePointOneOps, 100);
  EXPECT_GT(coverage.withSelection, 20);
}

}  // namespace
}  // namespace gxc
