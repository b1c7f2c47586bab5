#include "ir/printer.h"

#include <string>

namespace gxc {
namespace {

// The printer appends to one string, with no formatting call or string per piece: printing
// is a tenth of compiling a 100,000-layer chain.
using Buffer = std::string;

void appendAttrs(Buffer& out, const Attrs& attrs) {
  if (attrs.empty()) return;
  const char* separator = " {";
  for (const auto& [name, value] : attrs.all()) {
    out += separator;
    out += name;
    out += " = ";
    appendAttrValue(out, value);
    separator = ", ";
  }
  out += '}';
}

void appendLoc(Buffer& out, const SourceLoc& loc) {
  if (!loc.known()) return;
  out += " loc(";
  appendQuoted(out, loc.file);
  if (loc.node >= 0) {
    out += ":node ";
    appendAttrValue(out, int64_t{loc.node});
    out += ' ';
    appendQuoted(out, loc.nodeName);
  } else {
    out += ':';
    appendAttrValue(out, int64_t{loc.line});
    out += ':';
    appendAttrValue(out, int64_t{loc.col});
  }
  out += ')';
}

void appendOp(Buffer& out, const Op& op) {
  out += '%';
  out += op.result->name;
  out += " = ";
  out += opName(op.kind);
  const char* separator = " %";
  for (const Value* operand : op.operands) {
    out += separator;
    out += operand->name;
    separator = ", %";
  }
  appendAttrs(out, op.attrs);
  out += " : ";
  // A copy shows where it moves the value from and to.
  if (op.kind == OpKind::Copy && op.operands.size() == 1) {
    op.result->type.appendTo(out, false);
    out += " @";
    op.operands[0]->type.device.appendTo(out);
    out += " -> @";
    op.result->type.device.appendTo(out);
  } else {
    op.result->type.appendTo(out);
  }
  appendLoc(out, op.loc);
}

}  // namespace

std::string printLoc(const SourceLoc& loc) {
  Buffer out;
  appendLoc(out, loc);
  return out;
}

std::string printOp(const Op& op) {
  Buffer out;
  appendOp(out, op);
  return out;
}

std::string printGraph(const Graph& graph) {
  Buffer out;
  // Room for a typical op's line at once: grown by doubling, a 30 MB text would be copied and
  // its pages touched twice over.
  constexpr size_t kBytesPerOpLine = 192;
  out.reserve((graph.ops().size() + 2) * kBytesPerOpLine);
  out += "graph @";
  out += graph.name();
  out += '(';
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* input = graph.inputs()[i];
    out += i == 0 ? "%" : ", %";
    out += input->name;
    out += ": ";
    input->type.appendTo(out);
    appendLoc(out, input->loc);
  }
  out += ") -> (";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (i > 0) out += ", ";
    out += graph.outputs()[i].name;
  }
  out += ')';
  if (!graph.attrs().empty()) {
    out += " attributes";
    appendAttrs(out, graph.attrs());
  }
  out += " {\n";
  for (const Op* op : graph.ops()) {
    out += "  ";
    appendOp(out, *op);
    out += '\n';
  }
  out += "  return";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    out += i == 0 ? " %" : ", %";
    out += graph.outputs()[i].value->name;
  }
  out += "\n}\n";
  return out;
}

}  // namespace gxc
