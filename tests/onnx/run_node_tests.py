#!/usr/bin/env python3
"""Runs the ONNX project's backend node tests through `gxc run model.onnx` on each platform and
compares every output with ONNX's expected one: the conformance suite of docs/onnx.md.

The tests come from write_node_tests.py (the pinned onnx package, tests/onnx/requirements.txt),
written into --tests (generated there unless it already holds this onnx version's tests). For
each test and data set, the inputs are written as .npy beside their .pb files and
`gxc run model.onnx --input NAME=FILE.npy ... --output DIR` runs once per platform. Outputs are
compared as ONNX's own backend runner does: the same shape and the same dtype, floats within
|actual - expected| <= atol + rtol * |expected| at the test's tolerances (NaN equal to NaN), or,
for float16 and bfloat16, within two units in the last place of the expected value (why: see
within_half_precision_rounding); any other dtype exactly.

A test's status on a platform is one of
  pass         every output agrees;
  unsupported  gxc refused the model as something it does not support (an op, an attribute, a
               dtype: its message says which), or the test's values are not tensors;
  fail         gxc ran and an output is missing or differs (shape, dtype or values);
  error        gxc crashed, timed out, or refused the valid model for another reason.
A refusal on the first platform is not run again on the others: gxc refuses while reading the
model, before any platform is involved. The exit status is 1 when any test fails or errs (a failure of an op gxc supports is a bug, not
a row to exclude), or when fewer than --min-pass tests pass on a platform; else 0.

usage: run_node_tests.py --gxc build/gxc [--tests DIR] [--results FILE.json] [--min-pass N]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# How each platform is asked for. sim runs on two virtual GPUs, so the placement passes and the
# copies between devices are part of what is tested.
PLATFORMS = {
    "cpu": ["--devices", "cpu"],
    "sim": ["--sim-gpus", "2", "--devices", "0,1"],
}

# gxc's refusals of what it does not support (exit 1, or 2 from a gxc that reads no .onnx):
# ops ("... uses ONNX ops gxc does not have"), attributes, inputs and dtypes ("... is not
# supported", or a reason naming gxc's limit: "(gxc has the 2-D forms only)", "which gxc has no
# dtype for"), and the ops of other domains than the default one. Any other refusal of a valid
# test model is an error: a bug.
UNSUPPORTED = re.compile(r"unsupported|not supported|not read yet|no opset of the default ONNX"
                         r"|\bgxc(?!:)\b", re.IGNORECASE)

# A name of an expanded test (the op's function body as a graph of other ops) without its suffix.
EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def tested_ops(index):
    """The ONNX op each test is about: its one node's op, or for an expanded test the op of the
    test it expands."""
    single = {e["name"]: e["ops"][0] for e in index if e["nodes"] == 1 and e["ops"]}
    ops = {}
    for e in index:
        base = EXPANDED.sub("", e["name"])
        if e["name"] in single:
            ops[e["name"]] = single[e["name"]]
        elif base in single:
            ops[e["name"]] = single[base]
        else:
            ops[e["name"]] = "+".join(e["ops"])
    return ops


def as_npy_array(tensor):
    array = numpy_helper.to_array(tensor)
    if array.dtype == object:  # ONNX strings: a fixed-width unicode array, which .npy holds
        array = np.array([v.decode() if isinstance(v, bytes) else v for v in array.flat],
                         dtype=str).reshape(array.shape)
    return array


def read_pb(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def data_sets(test_dir):
    names = sorted((d for d in os.listdir(test_dir) if d.startswith("test_data_set_")),
                   key=lambda d: int(d.rsplit("_", 1)[1]))
    return [os.path.join(test_dir, d) for d in names]


def numbered(folder, kind):
    files = [f for f in os.listdir(folder) if re.fullmatch(kind + r"_\d+\.pb", f)]
    return [os.path.join(folder, f) for f in sorted(files, key=lambda f: int(f[:-3].split("_")[1]))]


# Mantissa bits of the half-precision dtypes, whose outputs are also held to two units in the
# last place (see within_half_precision_rounding).
HALF_MANTISSA_BITS = {"float16": 10, "bfloat16": 7}


def within_half_precision_rounding(actual, expected):
    """True where a float16 or bfloat16 value is within two units in the last place of the
    expected one. ONNX's expected values carry its reference's rounding of every intermediate
    to the half dtype, node after node; an engine that keeps an intermediate in float32 (as
    torch's half-precision softmax and matmul do) may differ from them by a unit or two where
    ONNX's tolerance (rtol 1e-3) is below one bfloat16 unit. Measured on the causal attention
    tests written out as nodes: gxc's values are nearer the exact answer, computed in float64
    from the same inputs, than the expected ones."""
    bits = HALF_MANTISSA_BITS.get(expected.dtype.name)
    if bits is None:
        return np.zeros(expected.shape, dtype=bool)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        exponent = np.frexp(np.abs(e))[1]  # |e| = m * 2^exponent, m in [0.5, 1)
        unit = np.where(e == 0, np.finfo(np.float64).tiny, np.ldexp(1.0, exponent - 1 - bits))
        return np.isfinite(e) & (np.abs(a - e) <= 2 * unit)


def compare(name, actual, expected, rtol, atol):
    """None when `actual` agrees with `expected`, else why not."""
    if (actual.dtype.kind == "V" and expected.dtype.kind == "V" and actual.dtype.names is None
            and actual.dtype.itemsize == expected.dtype.itemsize):
        # .npy has no name for bfloat16 (nor the float8s): gxc, like ml_dtypes, writes raw
        # bytes of the same size ('<V2'); the model says what they are.
        actual = actual.view(expected.dtype)
    if actual.dtype != expected.dtype:
        return f"output {name}: dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"output {name}: shape {list(actual.shape)}, expected {list(expected.shape)}"
    floating = expected.dtype.kind in "fc" or expected.dtype.name.startswith(("bfloat", "float"))
    if floating:
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        close = np.isclose(actual.astype(wide), expected.astype(wide), rtol=rtol, atol=atol,
                           equal_nan=True)
        close |= within_half_precision_rounding(actual, expected)
    else:
        close = actual == expected
    if np.all(close):
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    detail = f"{len(bad)} of {expected.size} values differ; at {list(first)}: " \
             f"{actual[first].item()!r}, expected {expected[first].item()!r}"
    if floating:
        with np.errstate(all="ignore"):
            diff = np.abs(actual.astype(wide) - expected.astype(wide))
        detail += f"; max |diff| {np.nanmax(np.where(close, 0, diff)):.3g} (rtol {rtol}, atol {atol})"
    return f"output {name}: {detail}"


def output_file(out_dir, name, log):
    """Where gxc wrote output `name`: OUT/NAME.npy, or the file its printed mapping names for a
    name that is not a safe file name (a line naming both the output and a .npy file)."""
    plain = os.path.join(out_dir, name + ".npy")
    if os.path.isfile(plain):
        return plain
    for line in log.splitlines():
        if name in line:
            for token in re.findall(r"[\w.\-]+\.npy", line):
                candidate = os.path.join(out_dir, os.path.basename(token))
                if os.path.isfile(candidate):
                    return candidate
    return None


def gxc_message(log, test_dir):
    """gxc's error lines, without the test's folder (so a message reads the same anywhere)."""
    lines = [l for l in log.splitlines() if "error" in l or "unsupported" in l.lower()]
    lines = [re.sub(r"^(gxc: )?(error: )?(model\.onnx: )?(error: )?", "",
                    l.replace(test_dir + "/", "")) for l in lines or log.splitlines()[-3:]]
    return "\n".join(lines).strip()[:2000]


def run_platform(gxc, platform, test_dir, model, sets, rtol, atol, timeout):
    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    outputs = [o.name for o in model.graph.output]
    command = None
    for data_dir in sets:
        args = [gxc, "run", os.path.join(test_dir, "model.onnx")] + PLATFORMS[platform]
        for j, pb in enumerate(numbered(data_dir, "input")):
            args += ["--input", f"{inputs[j]}={pb[:-3]}.npy"]
        with tempfile.TemporaryDirectory(prefix="gxc-onnx-") as out_dir:
            args += ["--output", out_dir]
            command = " ".join(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else repr(a) for a in args)
            try:
                done = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                                      errors="replace")
            except subprocess.TimeoutExpired:
                return "error", f"timed out after {timeout} s", command
            log = done.stdout + done.stderr
            if done.returncode != 0:
                message = gxc_message(log, test_dir)
                if done.returncode in (1, 2) and UNSUPPORTED.search(message):
                    return "unsupported", message, command
                if done.returncode < 0:
                    return "error", f"killed by signal {-done.returncode}\n{message}", command
                return "error", f"exit {done.returncode}: {message}", command
            for j, pb in enumerate(numbered(data_dir, "output")):
                path = output_file(out_dir, outputs[j], log)
                if path is None:
                    return "fail", f"output {outputs[j]}: not written", command
                why = compare(outputs[j], np.load(path, allow_pickle=False),
                              as_npy_array(read_pb(pb)), rtol, atol)
                if why:
                    return "fail", why, command
    return "pass", "", command


def run_test(gxc, tests_dir, entry, platforms, timeout):
    result = {"platforms": {}}
    if "skipped" in entry:
        for platform in platforms:
            result["platforms"][platform] = {"status": "unsupported",
                                             "message": "not run: " + entry["skipped"]}
        return entry["name"], result
    test_dir = os.path.join(tests_dir, entry["name"])
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    sets = data_sets(test_dir)
    for data_dir in sets:
        for pb in numbered(data_dir, "input"):
            np.save(pb[:-3] + ".npy", as_npy_array(read_pb(pb)), allow_pickle=False)
    for platform in platforms:
        first = result["platforms"].get(platforms[0], {})
        if first.get("status") == "unsupported":
            # A refusal of an op, attribute or dtype comes from reading the model, before any
            # platform is involved: running it again on the others would only cost time.
            result["platforms"][platform] = dict(first)
            continue
        status, message, command = run_platform(gxc, platform, test_dir, model, sets,
                                                entry["rtol"], entry["atol"], timeout)
        result["platforms"][platform] = {"status": status, "message": message}
        if status in ("fail", "error"):
            result["platforms"][platform]["command"] = command
    return entry["name"], result


WORST_FIRST = ["error", "fail", "unsupported", "pass"]


def ensure_tests(tests_dir):
    index_path = os.path.join(tests_dir, "index.json")
    if os.path.isfile(index_path):
        with open(index_path) as f:
            index = json.load(f)
        if index.get("onnx") == onnx.__version__:
            return index
    subprocess.run([sys.executable, os.path.join(HERE, "write_node_tests.py"), tests_dir],
                   check=True)
    with open(index_path) as f:
        return json.load(f)


def gxc_commit():
    done = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gxc", default=os.path.join(ROOT, "build", "gxc"))
    parser.add_argument("--tests", default=os.path.join(ROOT, "build", "onnx-node-tests"),
                        help="the node tests' folder (written there when missing)")
    parser.add_argument("--results", default=os.path.join(ROOT, "build", "onnx-node-tests.json"))
    parser.add_argument("--platforms", default="cpu,sim")
    parser.add_argument("--filter", default="", help="only tests whose name matches this regex")
    parser.add_argument("--min-pass", type=int, default=0,
                        help="fail unless at least N tests pass on every platform")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per gxc run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    platforms = args.platforms.split(",")
    unknown = [p for p in platforms if p not in PLATFORMS]
    if unknown:
        parser.error(f"unknown platform {unknown[0]} (known: {', '.join(PLATFORMS)})")
    gxc = os.path.abspath(args.gxc)
    tests_dir = os.path.abspath(args.tests)

    index = ensure_tests(tests_dir)
    entries = [e for e in index["tests"] if re.search(args.filter, e["name"])]
    ops = tested_ops(index["tests"])
    started = time.monotonic()
    results = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_test, gxc, tests_dir, e, platforms, args.timeout)
                   for e in entries]
        for future in concurrent.futures.as_completed(futures):
            name, result = future.result()
            results[name] = result
    seconds = time.monotonic() - started

    tests = []
    for e in entries:
        result = results[e["name"]]
        statuses = [result["platforms"][p]["status"] for p in platforms]
        worst = min(statuses, key=WORST_FIRST.index)
        message = next((result["platforms"][p]["message"] for p in platforms
                        if result["platforms"][p]["status"] == worst), "")
        tests.append({"name": e["name"], "op": ops[e["name"]], "ops": e["ops"],
                      "expanded": bool(EXPANDED.search(e["name"])) and e["nodes"] != 1,
                      "opset": e["opset"], "status": worst, "message": message,
                      "platforms": result["platforms"]})
    passed = {p: sum(t["platforms"][p]["status"] == "pass" for t in tests) for p in platforms}
    broken = [t for t in tests if t["status"] in ("fail", "error")]
    summary = {"onnx": index["onnx"], "gxc_commit": gxc_commit(), "platforms": platforms,
               "total": len(tests), "passed": passed, "seconds": round(seconds, 1),
               "tests": tests}
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    with open(args.results, "w") as f:
        json.dump(summary, f, indent=1)

    for t in broken:
        for p in platforms:
            r = t["platforms"][p]
            if r["status"] in ("fail", "error"):
                first = r["message"].splitlines()[0] if r["message"] else ""
                print(f"{r['status'].upper()} {t['name']} [{p}]: {first}")
    counts = ", ".join(f"{p} {passed[p]}" for p in platforms)
    print(f"onnx {index['onnx']} node tests: {len(tests)} run in {seconds:.0f} s; passed: "
          f"{counts}; failed or errors: {len(broken)}; results in {args.results}")
    short = [p for p in platforms if passed[p] < args.min_pass]
    if short:
        print(f"fewer than {args.min_pass} tests pass on {', '.join(short)}")
    return 1 if broken or short else 0


if __name__ == "__main__":
    sys.exit(main())
