#!/usr/bin/env python3
"""Prints, as Markdown, an inventory of the ONNX ops each given model uses: the opset, the graph's
inputs and outputs (with dynamic axes), and per op type the node count, every attribute value
seen (with how many nodes carry it), and for each input whether it is an initializer, a Constant
node's output, a graph input or computed by another node (naming the producing op types). The
last part is what tells a converter which "shape" inputs are constants and which are computed
inside the graph (Shape -> Gather -> ... -> Reshape).

usage: network_ops.py MODEL.onnx...   (needs the onnx package: tests/onnx/requirements.txt)
"""
import collections
import sys

import onnx
from onnx import helper, numpy_helper


def attribute_text(attribute):
    value = helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        array = numpy_helper.to_array(value)
        if array.size <= 8:
            return f"{attribute.name}=tensor<{array.dtype}>{array.tolist()}"
        return f"{attribute.name}=tensor<{array.dtype}>{list(array.shape)}"
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, float):
        value = f"{value:g}"
    if isinstance(value, list):
        value = [f"{v:g}" if isinstance(v, float) else v for v in value]
    return f"{attribute.name}={value}"


def dims_text(value_info):
    dims = value_info.type.tensor_type.shape.dim
    names = [d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in dims]
    element = onnx.TensorProto.DataType.Name(value_info.type.tensor_type.elem_type).lower()
    return f"{value_info.name}: {element}[{', '.join(names)}]"


def inventory(path):
    model = onnx.load(path, load_external_data=False)
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    graph_inputs = {i.name for i in graph.input}
    producer = {}
    for node in graph.node:
        for output in node.output:
            producer[output] = node.op_type

    def source(name):
        if name == "":
            return "absent"
        if name in initializers:
            return "initializer"
        if name in graph_inputs:
            return "graph input"
        if producer.get(name) == "Constant":
            return "Constant"
        return "computed by " + producer.get(name, "?")

    counts = collections.Counter(node.op_type for node in graph.node)
    attributes = collections.defaultdict(collections.Counter)
    sources = collections.defaultdict(collections.Counter)
    for node in graph.node:
        attributes[node.op_type].update(attribute_text(a) for a in node.attribute)
        for position, name in enumerate(node.input):
            sources[node.op_type][f"in{position} {source(name)}"] += 1

    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    lines = [f"## {path.split('/')[-1]}", "",
             f"opset: {opsets}; producer {model.producer_name} {model.producer_version}; "
             f"{len(graph.node)} nodes, {len(graph.initializer)} initializers", "",
             "inputs: " + "; ".join(dims_text(i) for i in graph.input if i.name not in initializers),
             "", "outputs: " + "; ".join(dims_text(o) for o in graph.output), "",
             "| op | nodes | attributes (nodes) | inputs (nodes) |", "|---|---|---|---|"]
    for op, count in sorted(counts.items()):
        attribute_cells = ", ".join(f"{text} ({n})" for text, n in sorted(attributes[op].items()))
        source_cells = ", ".join(f"{text} ({n})" for text, n in sorted(sources[op].items()))
        lines.append(f"| {op} | {count} | {attribute_cells or '-'} | {source_cells or '-'} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n".join(inventory(path) for path in sys.argv[1:]))


if __name__ == "__main__":
    main()
