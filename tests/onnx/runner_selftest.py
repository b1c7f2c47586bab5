#!/usr/bin/env python3
"""Checks run_node_tests.py against known answers, with fake_gxc.py in place of gxc: right
outputs pass, outputs off by 1e-2 or of another dtype fail, a refusal is unsupported, a crash
and a hang are errors, and the exit status says so; half-precision values pass within two
units in the last place and fail at three. Runs in the venv of scripts/python-env.sh.

usage: runner_selftest.py TESTS_DIR   (node tests as write_node_tests.py writes them)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# float, integer, bool and float64 outputs, several inputs, and an output read by index.
TESTS = ["test_abs", "test_argmax_default_axis_example", "test_and2d", "test_isnan",
         "test_cast_FLOAT_to_DOUBLE", "test_where_example", "test_max_example"]
FLOAT32_OUT = {"test_abs", "test_where_example", "test_max_example"}


def run(tests_dir, work, mode, extra=(), tests=TESTS):
    gxc = os.path.join(work, "gxc")
    with open(gxc, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{HERE}/fake_gxc.py" "$@"\n')
    os.chmod(gxc, 0o755)
    results = os.path.join(work, mode + ".json")
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "run_node_tests.py"), "--gxc", gxc, "--tests",
         tests_dir, "--results", results, "--filter", "^(" + "|".join(tests) + ")$", *extra],
        env=dict(os.environ, FAKE_GXC_MODE=mode), capture_output=True, text=True)
    with open(results) as f:
        statuses = {t["name"]: t["platforms"] for t in json.load(f)["tests"]}
    return done.returncode, statuses


def expect(condition, what):
    if not condition:
        sys.exit("runner self-test failed: " + what)


def check_half_precision_rule():
    sys.path.insert(0, HERE)
    import ml_dtypes
    import numpy as np
    from run_node_tests import compare
    for dtype, bits in ((np.float16, 10), (ml_dtypes.bfloat16, 7)):
        expected = np.array([0.469, -3.0, 1e-3, 0.0], dtype=dtype)
        unit = np.ldexp(1.0, np.frexp(np.abs(expected.astype(np.float64)))[1] - 1 - bits)
        for units, agrees in ((2, True), (3, False)):
            # a step of whole units from a value of the dtype is exact in the dtype
            actual = (expected.astype(np.float64) + units * unit).astype(dtype)
            actual[3] = 0
            why = compare("y", actual, expected, 1e-3, 1e-7)
            expect((why is None) == agrees, f"{dtype.__name__} off by {units} units: {why}")
    f32 = np.array([0.5], dtype=np.float32)
    expect(compare("y", f32 * np.float32(1.002), f32, 1e-3, 1e-7) is not None,
           "float32 must be held to the test's tolerance alone")


def main():
    check_half_precision_rule()
    tests_dir = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        def status_of(statuses, name):
            return {r["status"] for r in statuses[name].values()}

        rc, statuses = run(tests_dir, work, "right", ["--min-pass", str(len(TESTS))])
        expect(rc == 0, f"right outputs: exit {rc}")
        expect(all(status_of(statuses, t) == {"pass"} for t in TESTS), f"right: {statuses}")
        rc, _ = run(tests_dir, work, "right", ["--min-pass", str(len(TESTS) + 1)])
        expect(rc == 1, "--min-pass above the passes must fail")
        for mode, broken in (("perturb", FLOAT32_OUT | {"test_cast_FLOAT_to_DOUBLE"}),
                             ("dtype", FLOAT32_OUT)):
            rc, statuses = run(tests_dir, work, mode)
            expect(rc == 1, f"{mode}: exit {rc}")
            for t in TESTS:
                want = {"fail"} if t in broken else {"pass"}
                expect(status_of(statuses, t) == want, f"{mode} {t}: {statuses[t]}")
        rc, statuses = run(tests_dir, work, "unsupported")
        expect(rc == 0, f"unsupported: exit {rc}")
        expect(all(status_of(statuses, t) == {"unsupported"} for t in TESTS), "unsupported")
        for mode in ("crash", "hang"):
            rc, statuses = run(tests_dir, work, mode, ["--timeout", "3"], TESTS[:2])
            expect(rc == 1, f"{mode}: exit {rc}")
            expect(all(status_of(statuses, t) == {"error"} for t in TESTS[:2]),
                   f"{mode}: {statuses}")
    print("runner self-test: pass")


if __name__ == "__main__":
    main()
