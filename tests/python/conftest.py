"""Fixtures of the Python module's tests (ctest `python_module`, tests/CMakeLists.txt).

The module is the one built in the build tree (PYTHONPATH=BUILD/python); GXC_BINARY is the
gxc command of the same build, whose messages and results the module must repeat.
"""
import os
import pathlib
import subprocess

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def gxc_binary():
    binary = os.environ.get("GXC_BINARY")
    if not binary:
        pytest.fail("GXC_BINARY is not set: run these tests through ctest (python_module)")
    return binary


@pytest.fixture
def run_cli(gxc_binary):
    """Runs `gxc ARGS`; returns (exit status, stdout, stderr)."""

    def run(*args):
        done = subprocess.run([gxc_binary, *map(str, args)], capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr

    return run


@pytest.fixture(scope="session")
def models():
    return SOURCE_DIR / "models"


@pytest.fixture
def linear_relu(tmp_path):
    """A model of one linear layer and a relu, its weights in a safetensors file, and NumPy's
    answer for an input: the reference the module's results are checked against."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(7)
    weight = rng.standard_normal((5, 4)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    save_file({"fc.weight": weight, "fc.bias": bias}, str(tmp_path / "w.safetensors"))
    (tmp_path / "linear_relu.yaml").write_text(
        "gxc: 1\n"
        "name: linear_relu\n"
        "weights: w.safetensors\n"
        "dims: {batch: 3}\n"
        "inputs:\n"
        "  x: {shape: [batch, 4]}\n"
        "layers:\n"
        "  - {name: fc, op: linear, inputs: [x], in_features: 4, out_features: 5}\n"
        "  - {name: y, op: relu, inputs: [fc]}\n"
        "outputs: [y]\n")

    def reference(x):
        return np.maximum(x.astype(np.float64) @ weight.T.astype(np.float64) + bias, 0)

    return tmp_path / "linear_relu.yaml", reference
