// fuse: which ops run as one kernel.
//
// Terms. A *kernel* is what one launch computes; a *fused* kernel computes several ops, its
// *members*, and writes only the result of the last, its *root*: the other members' results
// stay in registers and never touch memory. Every member has a *role* (ir/fused_kernel.h):
// *elementwise* (add, relu, gelu, ..., with broadcasting and scalar operands), *anchor* (a
// reduction, softmax, log_softmax or layer_norm: an op whose threads cooperate over a row) or
// *GEMM* (matmul, linear: run by cuBLASLt, not by generated code) or *convolution* (conv2d: run
// by oneDNN or cuDNN). Around an anchor, the elementwise members that feed its input form its
// *prologue*, those that read its result its *tail*; after a GEMM or a convolution, the
// members the library applies before it stores form its *epilogue*.
//
// What fusion saves is memory traffic: an unfused chain of k elementwise ops over n values
// reads and writes about 2kn values, the fused kernel 2n, and launches once instead of k
// times. Where the values come from decides what may fuse:
//
// Legality. A producer p joins the kernel of its consumer c when
//   1. p's result is read by c alone (one op, maybe at two operands) and is not a graph
//      output: otherwise it must be written to memory anyway, and the kernel would have two
//      results. (XLA's instruction fusion duplicates cheap producers into each consumer and
//      TVM's FuseOps fuses diamonds through the post-dominator tree; both are refinements for
//      later. Here kernels are trees, each member read once, by the next one up.)
//   2. p and c are on one device (copies are never members, so a kernel never spans two);
//   3. the merged kernel reads at most kMaxKernelArgs - 1 values from outside (a launch passes
//      its result and its inputs as arguments: a chain summing 100 inputs becomes two
//      kernels), and keeps the rules of ir/fused_kernel.h, which come from what codegen
//      can emit as one kernel:
//      - elementwise trees, with broadcasting: each output element evaluates the tree at the
//        index each operand broadcasts from. Recomputing a small operand's member per output
//        element costs arithmetic, never traffic. batch_norm at inference is elementwise
//        too, reading its running statistics, weight and bias at the element's channel (its
//        dim 1): those are never computed in the kernel, only its x is.
//      - at most one anchor, with a prologue on its first operand and a tail after it. A
//        prologue is worth it even though softmax reads its input two or three times (max,
//        sum of exponentials, output): recomputing a cheap op per read costs no memory,
//        materializing it costs a write and a read of the whole tensor. The transformer's
//        `scores * (1/sqrt(dh))` before its softmax is the case. The tail runs in the block
//        that reduced the row, at every root element the row's results broadcast to, so it
//        may broadcast a reduction back over its rows (`x - mean(x, keepdim)`, the steps of a
//        layer norm written by hand): that saves the reduced tensor's write and read and a
//        launch, and the block reads its row again, as softmax and layer_norm do inside. The
//        codegen can go further (ir/fused_kernel.h allows any root), but a root larger than
//        the anchor's input would give each block more tail than row, to run on as few
//        blocks as the anchor has rows: rule 3 stops the tail at the anchor's input size (the
//        root has no more elements than the anchor reads; for softmax, log_softmax and
//        layer_norm, the anchor's own shape). Two anchors never share a kernel: each has its
//        own reduction pattern and launch shape. mse_loss and cross_entropy, reductions of
//        two operands with modes of their own, are not anchors yet; reshape (a view),
//        transpose, concat, slice, embedding and copies move data rather than compute on it,
//        and are never members. On the host, an f32 layer_norm and an f32 softmax or
//        log_softmax along the last axis take neither prologue nor tail: alone they run as
//        oneDNN primitives, 3-5x faster than a generated row kernel (target/host_library.h),
//        which saves more than the pass over the tensor the fusion would.
//      - a GEMM only first, followed by a chain of at most kMaxGemmEpilogue members that the
//        GEMM libraries apply before they store: an `add` of a 1-D bias over the last dim (the
//        vector broadcast along the rows of the row-major result; first, and for a matmul
//        only: linear's own bias takes the bias slot), relu, gelu, and the add of a residual
//        of the product's shape computed outside the kernel. On the host all of them are
//        oneDNN's matmul post-ops (eltwise relu, gelu_erf or gelu_tanh, binary add), applied
//        while the tile is in cache: a transformer block's fc1 + gelu and its projections +
//        residual adds lose a pass over their output each. On a GPU only what cuBLASLt has
//        epilogues for joins: the bias, then relu or tanh gelu (RELU_BIAS, GELU_BIAS, ...).
//        Any other chain is legal there (ir/fused_kernel.h) but runs as a generated kernel on
//        the GEMM's result, which saves only a launch and makes the GEMM wait for what the
//        chain reads (a residual copied from another GPU, the other shard's partial sum of a
//        split layer) where it could have run first. A matmul of a 3-D a by one matrix
//        (ONNX's MatMul over [batch, seq, in]) is one GEMM over its stacked rows and fuses as
//        a 2-D one does; other batched (3-D) matmuls are left unfused.
//        Nothing else joins a GEMM kernel, whose code is the library's, not ours.
//      - a convolution (conv2d) only first, followed only by a chain of batch_norm, relu,
//        clamp, hardswish and residual adds (ir/fused_kernel.h): what oneDNN applies as post-ops
//        while the output is still in its blocked layout and in cache, as ONNX Runtime's
//        Conv+BatchNorm and Conv+Activation fusions do. A ResNet's conv, bn, add, relu becomes one
//        primitive on the host instead of a convolution, a reorder to NCHW and an elementwise
//        kernel over the whole activation. The residual must come from outside (the libraries read
//        it, they do not evaluate it), so in a ResNet block the second convolution takes the add,
//        and the shortcut's convolution, read second, keeps only its batch_norm. A MobileNet's
//        conv, bn, clamp (ReLU6) is one too: the host clamps the primitive's result in its own
//        layout, so that it stays channels-last for the next convolution.
//
// Algorithm: greedy producer-consumer fusion, as XLA's InstructionFusion and TVM's FuseOps do,
// in phases:
//   1. Grouping (Grouper): walking the ops in order, every op with a role starts a group
//      with itself as root; an elementwise op or anchor then absorbs the groups of the
//      producers of its operands that pass rules 1 and 2, when the merged group keeps rule 3.
//      GEMM, convolution and anchor groups are tried first: their fusion saves the most (a
//      GEMM's or convolution's output round trip, an anchor's tail), and an elementwise
//      sibling absorbed first would keep a GEMM out. Rule 3 is checked on a summary of each group
//      (its GEMM and how far its epilogue has come, its anchor), so each absorption costs O(1) and
//      merging the smaller member list into the larger keeps the walk near-linear.
//   2. Ordering: each group of two or more moves its members down to just before its root,
//      keeping their order. Always legal: a member's operands are defined before the member,
//      so before the root, and its result is read only by later members.
//   3. Naming: groups of two or more become kernels "k0", "k1", ... in op order.
// A group is absorbed only by the sole reader of its root, so the groups depend only on the
// dataflow graph, not on the op order: the pass is deterministic and idempotent.
#include "passes/fuse.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "target/host_library.h"

namespace gxc {
namespace {

struct Group {
  std::vector<Op*> members;
  Op* root = nullptr;
  const Op* gemm = nullptr;
  const Op* conv = nullptr;
  const Op* anchor = nullptr;
  std::vector<const Value*> inputs;  // read from outside the group, each once
};

// A kernel takes its result and its inputs as arguments (ir/fused_kernel.h).
constexpr size_t kMaxInputs = kMaxKernelArgs - 1;

std::vector<const Value*> distinctOperands(const Op& op) {
  std::vector<const Value*> values;
  for (const Value* operand : op.operands)
    if (std::find(values.begin(), values.end(), operand) == values.end()) values.push_back(operand);
  return values;
}

// The inputs of `into` after absorbing `from`, whose root's result it reads.
std::vector<const Value*> mergedInputs(const Group& into, const Group& from) {
  std::vector<const Value*> inputs;
  for (const Value* input : into.inputs)
    if (input != from.root->result) inputs.push_back(input);
  for (const Value* input : from.inputs)
    if (std::find(inputs.begin(), inputs.end(), input) == inputs.end()) inputs.push_back(input);
  return inputs;
}

// Phase 1: the groups of the graph, by greedy producer-consumer fusion.
class Grouper {
 public:
  explicit Grouper(const Graph& graph) : graph_(graph) {
    // Sized once: on a graph of 100,000 ops, growing these maps step by step costs more
    // than filling them.
    readers_.reserve(graph.ops().size() + graph.inputs().size());
    groupOfRoot_.reserve(graph.ops().size());
    for (const Op* op : graph.ops())
      for (size_t i = 0; i < op->operands.size(); ++i)
        if (std::find(op->operands.begin(), op->operands.begin() + static_cast<std::ptrdiff_t>(i),
                      op->operands[i]) == op->operands.begin() + static_cast<std::ptrdiff_t>(i))
          ++readers_[op->operands[i]];
    for (const GraphOutput& output : graph.outputs()) ++readers_[output.value];
  }

  std::vector<Group> run() {
    for (Op* op : graph_.ops()) {
      KernelRole role = kernelRole(*op);
      if (role == KernelRole::None || !op->result->type.known || !op->device().placed()) continue;
      Group group;
      group.members = {op};
      group.root = op;
      group.inputs = distinctOperands(*op);
      if (role == KernelRole::Gemm) group.gemm = op;
      if (role == KernelRole::Conv) group.conv = op;
      if (role == KernelRole::Anchor) group.anchor = op;
      if (role != KernelRole::Gemm && role != KernelRole::Conv) absorbProducers(group);
      groupOfRoot_[op] = groups_.size();
      groups_.push_back(std::move(group));
    }
    std::vector<Group> result;
    for (Group& group : groups_)
      if (group.members.size() >= 2) result.push_back(std::move(group));
    return result;
  }

 private:
  // The groups whose root's result only `op` reads, on its device: GEMM, convolution and
  // anchor groups first, then the others, each in operand order.
  std::vector<size_t> candidates(const Op& op) const {
    std::vector<size_t> found;
    for (const Value* operand : op.operands) {
      const Op* producer = operand->producer;
      if (!producer || readers_.at(operand) != 1 || producer->device() != op.device()) continue;
      auto it = groupOfRoot_.find(producer);
      if (it == groupOfRoot_.end() || consumed_.count(it->second)) continue;
      if (std::find(found.begin(), found.end(), it->second) == found.end())
        found.push_back(it->second);
    }
    std::stable_partition(found.begin(), found.end(), [&](size_t index) {
      return groups_[index].gemm || groups_[index].conv || groups_[index].anchor;
    });
    return found;
  }

  void absorbProducers(Group& group) {
    for (size_t index : candidates(*group.root)) {
      Group& from = groups_[index];
      if (!mayAbsorb(group, from)) continue;
      std::vector<const Value*> inputs = mergedInputs(group, from);
      if (inputs.size() > kMaxInputs) continue;  // more than one launch can pass
      group.inputs = std::move(inputs);
      if (from.gemm) group.gemm = from.gemm;
      if (from.conv) group.conv = from.conv;
      if (from.anchor) group.anchor = from.anchor;
      if (from.members.size() > group.members.size()) std::swap(from.members, group.members);
      group.members.insert(group.members.end(), from.members.begin(), from.members.end());
      from.members.clear();
      consumed_.insert(index);
    }
  }

  // Rule 3 for `into` (rooted at its consumer) absorbing `from`, whose root it reads.
  static bool mayAbsorb(const Group& into, const Group& from) {
    const Op& root = *into.root;
    const Value* fed = from.root->result;
    // On the host an f32 layer_norm or last-axis softmax runs in oneDNN only alone.
    if (isHostLibraryRowOp(root) && root.device().isCpu()) return false;
    if (from.anchor && isHostLibraryRowOp(*from.anchor) && from.anchor->device().isCpu())
      return false;
    if (kernelRole(root) == KernelRole::Anchor) {
      // A prologue: an elementwise group feeding the anchor's first operand only.
      bool firstOnly = root.operands[0] == fed &&
                       std::count(root.operands.begin(), root.operands.end(), fed) == 1;
      return firstOnly && !from.gemm && !from.conv && !from.anchor && into.members.size() == 1;
    }
    // Nothing joins a GEMM's or a convolution's epilogue but the epilogue.
    if (into.gemm || into.conv) return false;
    if (from.conv)
      return into.members.size() == 1 && from.members.size() - 1 < kMaxConvEpilogue &&
             isConvEpilogueMember(fed, root);
    if (isChannelwise(root.kind)) {
      // batch_norm reads its params at the channel, not broadcast: only x may be computed.
      bool firstOnly = root.operands[0] == fed &&
                       std::count(root.operands.begin(), root.operands.end(), fed) == 1;
      if (!firstOnly) return false;
    }
    if (from.gemm) {
      if (into.members.size() != 1 || from.members.size() - 1 >= kMaxGemmEpilogue) return false;
      if (from.members.size() == 1 && isGemmBiasAdd(*from.gemm, root)) return true;
      if (!isGemmEpilogueMember(fed, root)) return false;
      if (root.device().isCpu()) return true;
      // On a GPU only cuBLASLt's epilogues pay (one activation, after the bias): anything
      // else runs as a generated kernel after the GEMM, which saves a launch but makes the
      // GEMM wait for what the epilogue reads (a residual copied from another GPU, the other
      // shard's partial sum), on a stream where it could have run before it.
      return isGemmActivation(root) &&
             std::none_of(from.members.begin(), from.members.end(),
                          [](const Op* member) { return isGemmActivation(*member); });
    }
    if (from.anchor)
      return !into.anchor && root.result->type.numel() <= from.anchor->operands[0]->type.numel();
    return true;  // an elementwise tree: a branch of the prologue, the tail or a map
  }

  const Graph& graph_;
  std::unordered_map<const Value*, int> readers_;  // ops reading each value; outputs count
  std::vector<Group> groups_;
  std::unordered_map<const Op*, size_t> groupOfRoot_;
  std::unordered_set<size_t> consumed_;  // groups absorbed into another
};

// Phase 2: the op order with each group's members moved down to its root. Leaves each
// group's members in op order.
std::vector<Op*> fusedOrder(const Graph& graph, std::vector<Group>& groups) {
  std::unordered_map<const Op*, Group*> groupOfMember;
  groupOfMember.reserve(graph.ops().size());
  for (Group& group : groups) {
    for (const Op* member : group.members) groupOfMember[member] = &group;
    group.members.clear();
  }
  for (Op* op : graph.ops())
    if (auto it = groupOfMember.find(op); it != groupOfMember.end())
      it->second->members.push_back(op);
  std::vector<Op*> order;
  order.reserve(graph.ops().size());
  for (Op* op : graph.ops()) {
    auto it = groupOfMember.find(op);
    if (it == groupOfMember.end())
      order.push_back(op);
    else if (it->second->root == op)
      order.insert(order.end(), it->second->members.begin(), it->second->members.end());
  }
  return order;
}

}  // namespace

bool FusePass::run(Graph& graph, const PassContext&) const {
  std::vector<Group> groups = Grouper(graph).run();
  std::vector<Op*> order = fusedOrder(graph, groups);

  // Phase 3: names in op order, and the attribute on every member (and on nothing else).
  std::unordered_map<const Op*, const Group*> groupOfFirst;
  for (const Group& group : groups) groupOfFirst[group.members.front()] = &group;
  std::vector<std::string> kernelNames;  // by kernel number
  std::unordered_map<const Op*, size_t> kernelOfOp;
  kernelOfOp.reserve(order.size());
  for (const Op* op : order) {
    auto it = groupOfFirst.find(op);
    if (it == groupOfFirst.end()) continue;
    kernelNames.push_back(fmt::format("k{}", kernelNames.size()));
    for (const Op* member : it->second->members) kernelOfOp[member] = kernelNames.size() - 1;
  }

  static const std::string kNone;
  bool changed = order != graph.ops();
  for (Op* op : graph.ops()) {
    auto it = kernelOfOp.find(op);
    const std::string& kernel = it == kernelOfOp.end() ? kNone : kernelNames[it->second];
    // The attribute as it is, read in place: this runs once per op.
    const AttrValue* now = op->attrs.find("kernel");
    const std::string* current = now ? std::get_if<std::string>(now) : &kNone;
    if (current && *current == kernel) continue;
    if (kernel.empty())
      op->attrs.erase("kernel");
    else
      op->attrs.set("kernel", kernel);
    changed = true;
  }
  if (order != graph.ops()) graph.reorderOps(std::move(order));
  return changed;
}

}  // namespace gxc
