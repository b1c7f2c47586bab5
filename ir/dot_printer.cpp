#include "ir/dot_printer.h"

#include <map>
#include <vector>

#include <fmt/format.h>

namespace gxc {
namespace {

// Light fills that stay readable with black text; devices beyond the list cycle through it.
const char* fillOf(const Device& device) {
  static const char* const kGpuFills[] = {"#cfe2f3", "#d9ead3", "#fce5cd", "#ead1dc",
                                          "#fff2cc", "#d0e0e3", "#f4cccc", "#d9d2e9"};
  if (!device.isCuda()) return "#eeeeee";
  return kGpuFills[static_cast<size_t>(device.index) % std::size(kGpuFills)];
}

// Names cannot hold quotes or backslashes (the model format's name rule), so a label's only
// escapes are the "\n" line breaks it asks dot for.
std::string quoted(const std::string& text) { return "\"" + text + "\""; }

std::string label(const Op& op) {
  if (op.kind == OpKind::Param)
    return fmt::format("{}\\n{}", op.layerName(), op.result->type.withoutDevice());
  return fmt::format("{} = {}\\n{}", op.layerName(), opName(op.kind),
                     op.result->type.withoutDevice());
}

// The split layer an op is a shard of (split-layers marks shards `shard_of`), or "" when
// none; a param shard belongs with the shard that reads it.
std::string shardGroup(const Graph& graph, const Op& op) {
  if (op.kind == OpKind::Param) {
    std::vector<Op*> users = graph.users(op.result);
    return users.size() == 1 && op.attrs.has("full_shape") ? shardGroup(graph, *users.front()) : "";
  }
  return op.attrs.getString("shard_of", "");
}

}  // namespace

std::string printDot(const Graph& graph) {
  std::string out = fmt::format("digraph {} {{\n", quoted(graph.name()));
  out += "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  // Boxes per device: inputs and ops, in IR order. Copies stand outside every box. Within a
  // device's box, the shard of a split layer (the shard and its weight) has a dashed box.
  std::map<std::string, std::vector<std::string>> nodesByDevice;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> shardsByDevice;
  std::map<std::string, Device> devices;
  for (const Value* input : graph.inputs()) {
    std::string device = input->type.device.str();
    devices[device] = input->type.device;
    nodesByDevice[device].push_back(
        fmt::format("{} [label={}, shape=oval, fillcolor=\"{}\"];", quoted(input->name),
                    quoted(fmt::format("{}\\n{}", input->name, input->type.withoutDevice())),
                    fillOf(input->type.device)));
  }
  std::string copies;
  for (const Op* op : graph.ops()) {
    std::string node = quoted(op->result->name);
    if (op->kind == OpKind::Copy) {
      copies +=
          fmt::format("  {} [label={}, style=\"dashed\", shape=cds];\n", node,
                      quoted(fmt::format("{}\\n{} -> {}", op->layerName(),
                                         op->operands[0]->type.device.str(), op->device().str())));
      continue;
    }
    std::string device = op->device().str();
    devices[device] = op->device();
    const char* shape = op->kind == OpKind::Param ? ", shape=note" : "";
    std::string line = fmt::format("{} [label={}{}, fillcolor=\"{}\"];", node, quoted(label(*op)),
                                   shape, fillOf(op->device()));
    std::string group = shardGroup(graph, *op);
    if (group.empty())
      nodesByDevice[device].push_back(line);
    else
      shardsByDevice[device][group].push_back(line);
  }
  // Under pipeline placement each GPU runs one stage: its box says which.
  bool staged = graph.attrs().has("pipeline_stages");
  int cluster = 0;
  for (const auto& [device, where] : devices) {
    std::string title =
        staged && where.isCuda() ? fmt::format("stage {} ({})", where.index, device) : device;
    out += fmt::format("  subgraph cluster_{} {{\n    label={}; style=\"rounded\";\n", cluster++,
                       quoted(title));
    for (const std::string& node : nodesByDevice[device]) out += "    " + node + "\n";
    for (const auto& [layer, nodes] : shardsByDevice[device]) {
      out += fmt::format("    subgraph cluster_{} {{\n      label={}; style=\"dashed\";\n",
                         cluster++, quoted("shard of " + layer));
      for (const std::string& node : nodes) out += "      " + node + "\n";
      out += "    }\n";
    }
    out += "  }\n";
  }
  out += copies;
  for (const Op* op : graph.ops())
    for (const Value* operand : op->operands)
      out += fmt::format("  {} -> {};\n", quoted(operand->name), quoted(op->result->name));
  for (const GraphOutput& output : graph.outputs()) {
    out += fmt::format("  {} [label={}, shape=oval, style=\"bold\"];\n",
                       quoted("output:" + output.name), quoted(output.name));
    out +=
        fmt::format("  {} -> {};\n", quoted(output.value->name), quoted("output:" + output.name));
  }
  return out + "}\n";
}

}  // namespace gxc
