#include "ir/verifier.h"

#include <string_view>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "ir/infer_type.h"
#include "ir/param_shard.h"

namespace gxc {

std::optional<std::string> schemaProblem(const Op& op) {
  const OpSchema& schema = opSchema(op.kind);
  int count = static_cast<int>(op.operands.size());
  if (count < schema.minOperands || (schema.maxOperands >= 0 && count > schema.maxOperands)) {
    std::string expected = schema.maxOperands < 0 ? fmt::format("at least {}", schema.minOperands)
                           : schema.minOperands == schema.maxOperands
                               ? fmt::format("{}", schema.minOperands)
                               : fmt::format("{} to {}", schema.minOperands, schema.maxOperands);
    return fmt::format("{} takes {} operands, got {}", schema.name, expected, count);
  }
  for (const auto& [name, value] : op.attrs.all()) {
    if (isScheduleAttr(name) || isKernelAttr(name)) {
      AttrKind expected = name == "stream" || name == "kernel" ? AttrKind::String
                          : name == "wait"                     ? AttrKind::IntList
                                                               : AttrKind::Int;
      if (attrKind(value) != expected)
        return fmt::format("attribute '{}' must be a {}", name, attrKindName(expected));
      continue;
    }
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& candidate : schema.attrs)
      if (candidate.name == name) spec = &candidate;
    if (!spec) return fmt::format("{} has no attribute '{}'", schema.name, name);
    if (!(spec->kinds & maskOf(attrKind(value))))
      return fmt::format("attribute '{}' of {} cannot be a {}", name, schema.name,
                         attrKindName(attrKind(value)));
  }
  for (const AttrSpec& spec : schema.attrs)
    if (spec.required && !op.attrs.has(spec.name))
      return fmt::format("{} needs attribute '{}'", schema.name, spec.name);
  if (op.kind == OpKind::Param)
    if (auto problem = paramShardProblem(op)) return problem;
  bool binary = takesScalar(op.kind);
  if (binary && (count == 1) != op.attrs.has("scalar"))
    return fmt::format("{} takes two operands, or one operand and 'scalar'", schema.name);
  return std::nullopt;
}

std::vector<std::string> verifyGraph(const Graph& graph) {
  std::vector<std::string> problems;
  // Hashed, and the names as views of the values' own: the verifier runs after the last pass
  // of every compile, over every op.
  std::unordered_set<const Value*> defined;
  std::unordered_set<std::string_view> names;
  defined.reserve(graph.inputs().size() + graph.ops().size());
  names.reserve(graph.inputs().size() + graph.ops().size());
  auto define = [&](const Value* value) {
    if (!names.insert(value->name).second)
      problems.push_back(fmt::format("%{} is defined twice", value->name));
    defined.insert(value);
  };
  for (const Value* input : graph.inputs()) {
    define(input);
    if (input->type.known && !checkedNumel(input->type.shape))
      problems.push_back(fmt::format("input %{} has an overflowing shape", input->name));
  }
  for (const Op* op : graph.ops()) {
    // Made only when there is a problem to say.
    auto where = [op] { return fmt::format("op %{}", op->result->name); };
    if (op->result->producer != op) problems.push_back(where() + ": result does not point back");
    for (const Value* operand : op->operands)
      if (!defined.count(operand))
        problems.push_back(
            fmt::format("{}: operand %{} is not defined before it", where(), operand->name));
    if (auto problem = schemaProblem(*op)) problems.push_back(where() + ": " + *problem);
    define(op->result);
    if (problems.empty() && op->result->type.known) {
      bool operandsKnown = true;
      for (const Value* operand : op->operands) operandsKnown &= operand->type.known;
      if (operandsKnown) {
        try {
          TensorType expected = inferResultType(*op);
          if (expected != op->result->type)
            problems.push_back(fmt::format("{}: type is {} but its rule gives {}", where(),
                                           op->result->type.str(), expected.str()));
        } catch (const Error& error) {
          problems.push_back(where() + ": " + error.message());
        }
      }
    }
  }
  // Kernel rules read uses and types, so only once every op is otherwise sound.
  if (problems.empty())
    for (std::string& problem : kernelProblems(graph)) problems.push_back(std::move(problem));
  if (graph.outputs().empty()) problems.push_back("the graph has no outputs");
  for (const GraphOutput& output : graph.outputs())
    if (!defined.count(output.value))
      problems.push_back(fmt::format("output {} is not a value of the graph", output.name));
  return problems;
}

}  // namespace gxc
