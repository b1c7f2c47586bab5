#include "ir/fused_kernel.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace gxc {
namespace {

bool isAnchorKind(OpKind kind) {
  return isReduction(kind) || kind == OpKind::Softmax || kind == OpKind::LogSoftmax ||
         kind == OpKind::LayerNorm || kind == OpKind::RmsNorm || kind == OpKind::GroupNorm;
}

// The checks of one kernel, members[0] to members.back(), against the rules of the header.
class KernelChecker {
 public:
  KernelChecker(const std::string& name, std::vector<const Op*> members,
                const std::unordered_map<const Value*, std::vector<const Op*>>& users,
                const std::unordered_set<const Value*>& outputs, std::vector<std::string>& problems)
      : name_(name),
        members_(std::move(members)),
        memberSet_(members_.begin(), members_.end()),
        users_(users),
        outputs_(outputs),
        problems_(problems) {}

  void check() {
    checkMembers();
    checkEscapes();
    checkAnchor();
    checkGemm();
    checkConv();
  }

 private:
  template <typename... Args>
  void problem(const Op& op, fmt::format_string<Args...> format, Args&&... args) {
    problems_.push_back(fmt::format("op %{}: ", op.result->name) +
                        fmt::format(format, std::forward<Args>(args)...));
  }

  bool isMember(const Value* value) const {
    return value->producer && memberSet_.count(value->producer);
  }

  void checkMembers() {
    const Device& device = members_.front()->device();
    for (const Op* op : members_) {
      if (kernelRole(*op) == KernelRole::None)
        problem(*op, "{} {} cannot be a member of kernel '{}'", opName(op->kind),
                op->result->type.withoutDevice(), name_);
      if (op->device() != device)
        problem(*op, "kernel '{}' has members on {} and {}", name_, device.str(),
                op->device().str());
    }
  }

  void checkEscapes() {
    for (size_t i = 0; i + 1 < members_.size(); ++i) {
      const Op& op = *members_[i];
      if (outputs_.count(op.result))
        problem(op,
                "its result is a graph output, but only the last member of kernel '{}' may "
                "be one",
                name_);
      auto it = users_.find(op.result);
      if (it == users_.end()) {
        problem(op,
                "no later member of kernel '{}' reads its result; every member but the last "
                "must feed one",
                name_);
        continue;
      }
      for (const Op* user : it->second)
        if (!memberSet_.count(user)) {
          problem(op,
                  "%{} reads its result outside kernel '{}'; only the last member's result "
                  "may leave a kernel",
                  user->result->name, name_);
          break;
        }
    }
  }

  void checkAnchor() {
    const Op* anchor = nullptr;
    for (const Op* op : members_) {
      if (kernelRole(*op) != KernelRole::Anchor) continue;
      if (anchor) {
        problem(*op, "kernel '{}' has a second anchor after %{}", name_, anchor->result->name);
        return;
      }
      anchor = op;
    }
    for (const Op* op : members_)
      if (isChannelwise(op->kind))
        for (size_t i = 1; i < op->operands.size(); ++i)
          if (isMember(op->operands[i]))
            problem(*op, "only its first operand may be computed in kernel '{}', not %{}", name_,
                    op->operands[i]->name);
    if (!anchor) return;
    for (size_t i = 1; i < anchor->operands.size(); ++i)
      if (isMember(anchor->operands[i]))
        problem(*anchor, "only its first operand may be computed in kernel '{}', not %{}", name_,
                anchor->operands[i]->name);
  }

  void checkGemm() {
    for (size_t i = 1; i < members_.size(); ++i)
      if (kernelRole(*members_[i]) == KernelRole::Gemm)
        problem(*members_[i], "a GEMM may only be the first member of kernel '{}'", name_);
    const Op& gemm = *members_.front();
    if (kernelRole(gemm) != KernelRole::Gemm) return;
    if (members_.size() - 1 > kMaxGemmEpilogue) {
      problem(gemm, "kernel '{}' has {} members after the GEMM; at most {} may follow it", name_,
              members_.size() - 1, kMaxGemmEpilogue);
      return;
    }
    // The epilogue: [bias add] then relu, gelu and residual adds, each reading the member
    // before; a residual comes from outside the kernel.
    const Value* fed = gemm.result;
    for (size_t i = 1; i < members_.size(); ++i) {
      const Op& op = *members_[i];
      bool residualComputedHere = false;
      for (const Value* operand : op.operands)
        residualComputedHere |= operand != fed && isMember(operand);
      bool bias = i == 1 && isGemmBiasAdd(gemm, op);
      if (!(bias || isGemmEpilogueMember(fed, op)) || residualComputedHere) {
        problem(op,
                "only a bias add, then relu, gelu and the add of a residual from outside, each "
                "reading the member before, may follow the GEMM %{} in kernel '{}'",
                gemm.result->name, name_);
        return;
      }
      fed = op.result;
    }
  }

  void checkConv() {
    for (size_t i = 1; i < members_.size(); ++i)
      if (kernelRole(*members_[i]) == KernelRole::Conv)
        problem(*members_[i], "a convolution may only be the first member of kernel '{}'", name_);
    const Op& conv = *members_.front();
    if (kernelRole(conv) != KernelRole::Conv) return;
    if (members_.size() - 1 > kMaxConvEpilogue) {
      problem(conv, "kernel '{}' has {} members after the convolution; at most {} may follow it",
              name_, members_.size() - 1, kMaxConvEpilogue);
      return;
    }
    const Value* fed = conv.result;
    for (size_t i = 1; i < members_.size(); ++i) {
      const Op& op = *members_[i];
      bool residualComputedHere = false;
      for (const Value* operand : op.operands)
        residualComputedHere |= operand != fed && isMember(operand);
      if (!isConvEpilogueMember(fed, op) || residualComputedHere) {
        problem(
            op,
            "only batch_norm, relu, clamp, hardswish and the add of a residual from outside, each "
            "reading the member before, may follow the convolution %{} in kernel '{}'",
            conv.result->name, name_);
        return;
      }
      fed = op.result;
    }
  }

  const std::string& name_;
  std::vector<const Op*> members_;
  std::set<const Op*> memberSet_;
  const std::unordered_map<const Value*, std::vector<const Op*>>& users_;
  const std::unordered_set<const Value*>& outputs_;
  std::vector<std::string>& problems_;
};

}  // namespace

KernelRole kernelRole(const Op& op) {
  if (isElementwiseAnyDType(op.kind)) return KernelRole::Elementwise;  // any result dtype
  const TensorType& type = op.result->type;
  // Shape inference lets integers through the arithmetic ops that keep them integer only.
  if (type.known && isInteger(type.dtype) &&
      (isElementwiseUnary(op.kind) || isElementwiseBinary(op.kind)))
    return KernelRole::Elementwise;
  if (type.known && !isFloat(type.dtype)) return KernelRole::None;
  if (isElementwiseUnary(op.kind) || isElementwiseBinary(op.kind) || isChannelwise(op.kind))
    return KernelRole::Elementwise;
  if (isAnchorKind(op.kind)) return KernelRole::Anchor;
  // An f64 GEMM fuses nothing: its bias add or activation stays an elementwise kernel of its
  // own, computed in double, rather than relying on epilogues cuBLASLt does not document for
  // CUBLAS_COMPUTE_64F. (A linear's own bias still rides in the GEMM: cuda_gemm.h.)
  if ((op.kind == OpKind::Linear || op.kind == OpKind::Matmul) && type.known &&
      type.dtype == DType::F64)
    return KernelRole::None;
  if (op.kind == OpKind::Conv2d) return KernelRole::Conv;
  if (op.kind == OpKind::Linear) return KernelRole::Gemm;
  if (op.kind == OpKind::Matmul) {
    // Other batched (3-D) matmuls are left alone: cuBLASLt's bias epilogue is per matrix.
    if (isRowStackedMatmul(op)) return KernelRole::Gemm;
    for (const Value* operand : op.operands)
      if (operand->type.known && operand->type.rank() != 2) return KernelRole::None;
    return KernelRole::Gemm;
  }
  return KernelRole::None;
}

bool isRowStackedMatmul(const Op& op) {
  if (op.kind != OpKind::Matmul || op.operands.size() != 2) return false;
  const TensorType& a = op.operands[0]->type;
  const TensorType& b = op.operands[1]->type;
  return a.known && b.known && a.rank() == 3 && b.rank() == 2 &&
         !op.attrs.getBool("transpose_a", false);
}

bool isGemmBiasAdd(const Op& gemm, const Op& add) {
  if (gemm.kind != OpKind::Matmul || add.kind != OpKind::Add || add.operands.size() != 2)
    return false;
  const Value* product = gemm.result;
  const Value* a = add.operands[0];
  const Value* b = add.operands[1];
  if ((a == product) == (b == product)) return false;  // reads it exactly once
  const Value* bias = a == product ? b : a;
  const TensorType& out = product->type;
  return out.known && bias->type.known && out.rank() >= 2 && bias->type.rank() == 1 &&
         bias->type.shape[0] == out.shape.back() && bias->type.dtype == out.dtype;
}

bool isGemmActivation(const Op& op) {
  return op.kind == OpKind::Relu ||
         (op.kind == OpKind::Gelu && op.attrs.getString("approximate", "none") == "tanh");
}

const Value* residualOf(const Op& add, const Value* fed) {
  return add.operands[0] == fed ? add.operands[1] : add.operands[0];
}

namespace {

// Whether `op` reads `fed` once and keeps its dtype: what every epilogue member does.
bool extendsEpilogue(const Value* fed, const Op& op) {
  return std::count(op.operands.begin(), op.operands.end(), fed) == 1 && op.result->type.known &&
         op.result->type.dtype == fed->type.dtype;
}

// Whether `add` adds `fed` and a tensor of its shape and dtype, each once.
bool isResidualAdd(const Value* fed, const Op& add) {
  if (add.kind != OpKind::Add || add.operands.size() != 2) return false;
  const Value* residual = residualOf(add, fed);
  return residual != fed && residual->type.known && residual->type.shape == fed->type.shape &&
         residual->type.dtype == fed->type.dtype;
}

}  // namespace

bool isGemmEpilogueMember(const Value* fed, const Op& op) {
  if (!extendsEpilogue(fed, op)) return false;
  return op.kind == OpKind::Relu || op.kind == OpKind::Gelu || isResidualAdd(fed, op);
}

bool isConvEpilogueMember(const Value* fed, const Op& op) {
  if (!extendsEpilogue(fed, op)) return false;
  switch (op.kind) {
    case OpKind::Relu:
    case OpKind::Clamp:
    case OpKind::Hardswish:
      return true;
    case OpKind::BatchNorm:
      return op.operands[0] == fed;
    case OpKind::Add:
      return isResidualAdd(fed, op);
    default:
      return false;
  }
}

const std::string& kernelOf(const Op& op) { return op.attrs.getStringOrEmpty("kernel"); }

std::vector<KernelSpan> kernelSpans(const Graph& graph) {
  std::vector<KernelSpan> spans;
  const std::vector<Op*>& ops = graph.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string& name = kernelOf(*ops[i]);
    if (name.empty()) continue;
    if (!spans.empty() && spans.back().name == name && spans.back().last + 1 == i)
      spans.back().last = i;
    else
      spans.push_back({name, i, i});
  }
  return spans;
}

std::unordered_set<const Value*> kernelInternalValues(const Graph& graph) {
  std::unordered_set<const Value*> internal;
  for (const KernelSpan& span : kernelSpans(graph))
    for (size_t i = span.first; i < span.last; ++i) internal.insert(graph.ops()[i]->result);
  return internal;
}

std::vector<std::string> kernelProblems(const Graph& graph) {
  std::vector<std::string> problems;
  std::vector<KernelSpan> spans = kernelSpans(graph);
  if (spans.empty()) return problems;
  std::unordered_map<const Value*, std::vector<const Op*>> users;
  for (const Op* op : graph.ops())
    for (const Value* operand : op->operands) {
      std::vector<const Op*>& readers = users[operand];
      if (readers.empty() || readers.back() != op) readers.push_back(op);
    }
  std::unordered_set<const Value*> outputs;
  for (const GraphOutput& output : graph.outputs()) outputs.insert(output.value);
  std::set<std::string> seen;
  for (const KernelSpan& span : spans) {
    const Op& first = *graph.ops()[span.first];
    if (!seen.insert(span.name).second) {
      problems.push_back(fmt::format(
          "op %{}: kernel '{}' is not contiguous: %{}, not a member, comes between its members",
          first.result->name, span.name, graph.ops()[span.first - 1]->result->name));
      continue;
    }
    std::vector<const Op*> members(
        graph.ops().begin() + static_cast<std::ptrdiff_t>(span.first),
        graph.ops().begin() + static_cast<std::ptrdiff_t>(span.last) + 1);
    KernelChecker(span.name, std::move(members), users, outputs, problems).check();
  }
  return problems;
}

}  // namespace gxc
