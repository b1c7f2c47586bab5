#include "runtime/cuda/gpu_index_checks.h"

#include "ir/kernel_steps.h"
#include "runtime/host/host_generated_kernels.h"

namespace gxc {
namespace {

const Value* throughCopies(const Value* value) {
  while (value->producer && stepKindOf(*value->producer) == StepKind::Copy)
    value = value->producer->operands[0];
  return value;
}

// The operand of a concat (along axis 0) that `slice` takes back exactly, if it does: how
// batch-transfers unpacks the buffer it packed several tensors into for one transfer.
const Value* concatPartTakenBack(const Op& slice) {
  const Value* whole = throughCopies(slice.operands[0]);
  const Op* concat = whole->producer;
  if (!concat || concat->kind != OpKind::Concat || !slice.attrs.has("end")) return nullptr;
  int64_t rank = whole->type.rank();
  auto axisOf = [rank](const Op& op) {
    int64_t axis = op.attrs.getInt("axis", 0);
    return axis < 0 ? axis + rank : axis;
  };
  if (axisOf(slice) != 0 || axisOf(*concat) != 0 || slice.attrs.getInt("step", 1) != 1)
    return nullptr;
  int64_t start = slice.attrs.getInt("start", 0), end = slice.attrs.getInt("end", 0);
  int64_t offset = 0;
  for (const Value* part : concat->operands) {
    int64_t rows = part->type.shape.at(0);
    if (offset == start && offset + rows == end) return part;
    offset += rows;
  }
  return nullptr;
}

// The value holding the same elements as `value` where they were made: followed back through
// copies between devices, reshapes, and the unpacking of packed transfers.
const Value* madeAs(const Value* value) {
  while (const Op* producer = value->producer) {
    if (stepKindOf(*producer) == StepKind::Copy || producer->kind == OpKind::Reshape) {
      value = producer->operands[0];
    } else if (const Value* part =
                   producer->kind == OpKind::Slice ? concatPartTakenBack(*producer) : nullptr) {
      value = part;
    } else {
      break;
    }
  }
  return value;
}

}  // namespace

std::vector<IndexCheck> planIndexChecks(const Graph& graph) {
  std::vector<IndexCheck> checks;
  for (const Op* op : graph.ops()) {
    const Value* indices = dataIndexOperand(*op);
    if (!indices || !op->device().isCuda()) continue;
    // The same values where they were made. (Any other slice picks some of them: it is not
    // followed, so a check never sees values its op does not read.)
    const Value* source = madeAs(indices);
    if (!source->producer)
      checks.push_back({op, source, IndexCheckPoint::RunStart});
    else if (source->producer->device().isCpu() && source->producer->kind != OpKind::Param)
      checks.push_back({op, source, IndexCheckPoint::AfterHostOp});
    else
      checks.push_back({op, indices, IndexCheckPoint::ReadBack});
  }
  return checks;
}

}  // namespace gxc
