#!/usr/bin/env python3
"""Writes the ONNX project's backend node tests into OUT_DIR, in the layout ONNX ships them:
OUT_DIR/test_NAME/model.onnx and OUT_DIR/test_NAME/test_data_set_K/{input,output}_J.pb (each a
serialized TensorProto), plus OUT_DIR/index.json (name, op types, opset, rtol, atol).

The onnx package from PyPI does not ship this data; its generator does
(onnx.backend.test.case.node.collect_testcases). Tests whose inputs or outputs are not plain
tensors (sequences, maps, optionals) are listed in the index with "skipped" and their reason.

usage: write_node_tests.py OUT_DIR   (needs the pinned onnx package: see requirements.txt)
"""
import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case import node as node_cases


def tensor_proto(value, name):
    if isinstance(value, TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def non_tensor(values):
    return [v.name for v in values if not v.type.HasField("tensor_type")]


def write_case(case, out_dir):
    graph = case.model.graph
    odd = non_tensor(graph.input) + non_tensor(graph.output)
    entry = {
        "name": case.name,
        "ops": sorted({n.op_type for n in graph.node}),
        "nodes": len(graph.node),
        "opset": max((o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")),
                     default=0),
        "rtol": case.rtol,
        "atol": case.atol,
    }
    if odd:
        entry["skipped"] = "values that are not tensors: " + ", ".join(odd)
        return entry
    case_dir = os.path.join(out_dir, case.name)
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    for k, (inputs, outputs) in enumerate(case.data_sets):
        data_dir = os.path.join(case_dir, f"test_data_set_{k}")
        os.makedirs(data_dir)
        for kind, values, declared in (("input", inputs, graph.input),
                                       ("output", outputs, graph.output)):
            for j, value in enumerate(values):
                with open(os.path.join(data_dir, f"{kind}_{j}.pb"), "wb") as f:
                    f.write(tensor_proto(value, declared[j].name).SerializeToString())
    return entry


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow warnings
        cases = node_cases.collect_testcases(None)
    index = [write_case(case, out_dir) for case in sorted(cases, key=lambda c: c.name)]
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        json.dump({"onnx": onnx.__version__, "tests": index}, f, indent=1, sort_keys=True)
    written = sum("skipped" not in e for e in index)
    print(f"onnx {onnx.__version__}: {written} node tests written to {out_dir}, "
          f"{len(index) - written} skipped (not tensors)")


if __name__ == "__main__":
    main()
