#include "ir/printer.h"

#include <fmt/format.h>

#include <iterator>

namespace gxc {
namespace {

// The printer appends to one buffer: a 100,000-op graph printed through a string per piece
// spent most of its time allocating and copying them.
using Buffer = fmt::memory_buffer;

void appendAttrs(Buffer& out, const Attrs& attrs) {
  if (attrs.empty()) return;
  const char* separator = " {";
  for (const auto& [name, value] : attrs.all()) {
    fmt::format_to(std::back_inserter(out), "{}{} = {}", separator, name, attrValueString(value));
    separator = ", ";
  }
  out.push_back('}');
}

void appendLoc(Buffer& out, const SourceLoc& loc) {
  if (!loc.known()) return;
  if (loc.node >= 0)
    fmt::format_to(std::back_inserter(out), " loc({}:node {} {})", attrValueString(loc.file),
                   loc.node, attrValueString(loc.nodeName));
  else
    fmt::format_to(std::back_inserter(out), " loc({}:{}:{})", attrValueString(loc.file), loc.line,
                   loc.col);
}

void appendOp(Buffer& out, const Op& op) {
  fmt::format_to(std::back_inserter(out), "%{} = {}", op.result->name, opName(op.kind));
  const char* separator = " %";
  for (const Value* operand : op.operands) {
    fmt::format_to(std::back_inserter(out), "{}{}", separator, operand->name);
    separator = ", %";
  }
  appendAttrs(out, op.attrs);
  // A copy shows where it moves the value from and to.
  if (op.kind == OpKind::Copy && op.operands.size() == 1)
    fmt::format_to(std::back_inserter(out), " : {} @{} -> @{}", op.result->type.withoutDevice(),
                   op.operands[0]->type.device.str(), op.result->type.device.str());
  else
    fmt::format_to(std::back_inserter(out), " : {}", op.result->type.str());
  appendLoc(out, op.loc);
}

}  // namespace

std::string printLoc(const SourceLoc& loc) {
  Buffer out;
  appendLoc(out, loc);
  return fmt::to_string(out);
}

std::string printOp(const Op& op) {
  Buffer out;
  appendOp(out, op);
  return fmt::to_string(out);
}

std::string printGraph(const Graph& graph) {
  Buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "graph @{}(", graph.name());
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* input = graph.inputs()[i];
    fmt::format_to(to, "{}%{}: {}", i == 0 ? "" : ", ", input->name, input->type.str());
    appendLoc(out, input->loc);
  }
  fmt::format_to(to, ") -> (");
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    fmt::format_to(to, "{}{}", i == 0 ? "" : ", ", graph.outputs()[i].name);
  out.push_back(')');
  if (!graph.attrs().empty()) {
    fmt::format_to(to, " attributes");
    appendAttrs(out, graph.attrs());
  }
  fmt::format_to(to, " {{\n");
  for (const Op* op : graph.ops()) {
    fmt::format_to(to, "  ");
    appendOp(out, *op);
    out.push_back('\n');
  }
  fmt::format_to(to, "  return");
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    fmt::format_to(to, "{}%{}", i == 0 ? " " : ", ", graph.outputs()[i].value->name);
  fmt::format_to(to, "\n}}\n");
  return fmt::to_string(out);
}

}  // namespace gxc
