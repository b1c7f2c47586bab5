#include "ir/printer.h"

#include <fmt/format.h>

namespace gxc {
namespace {

std::string printAttrs(const Attrs& attrs) {
  if (attrs.empty()) return "";
  std::string out = " {";
  bool first = true;
  for (const auto& [name, value] : attrs.all()) {
    out += fmt::format("{}{} = {}", first ? "" : ", ", name, attrValueString(value));
    first = false;
  }
  return out + "}";
}

}  // namespace

std::string printLoc(const SourceLoc& loc) {
  if (!loc.known()) return "";
  if (loc.node >= 0)
    return fmt::format(" loc({}:node {} {})", attrValueString(loc.file), loc.node,
                       attrValueString(loc.nodeName));
  return fmt::format(" loc({}:{}:{})", attrValueString(loc.file), loc.line, loc.col);
}

std::string printOp(const Op& op) {
  std::string out = fmt::format("%{} = {}", op.result->name, opName(op.kind));
  for (size_t i = 0; i < op.operands.size(); ++i)
    out += fmt::format("{}%{}", i == 0 ? " " : ", ", op.operands[i]->name);
  out += printAttrs(op.attrs);
  // A copy shows where it moves the value from and to.
  if (op.kind == OpKind::Copy && op.operands.size() == 1)
    out += fmt::format(" : {} @{} -> @{}", op.result->type.withoutDevice(),
                       op.operands[0]->type.device.str(), op.result->type.device.str());
  else
    out += " : " + op.result->type.str();
  out += printLoc(op.loc);
  return out;
}

std::string printGraph(const Graph& graph) {
  std::string out = fmt::format("graph @{}(", graph.name());
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* input = graph.inputs()[i];
    out += fmt::format("{}%{}: {}{}", i == 0 ? "" : ", ", input->name, input->type.str(),
                       printLoc(input->loc));
  }
  out += ") -> (";
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : ", ", graph.outputs()[i].name);
  out += ")";
  if (!graph.attrs().empty()) out += " attributes" + printAttrs(graph.attrs());
  out += " {\n";
  for (const Op* op : graph.ops()) out += "  " + printOp(*op) + "\n";
  out += "  return";
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    out += fmt::format("{}%{}", i == 0 ? " " : ", ", graph.outputs()[i].value->name);
  out += "\n}\n";
  return out;
}

}  // namespace gxc
