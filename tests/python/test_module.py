"""gxc.load, gxc.compile and runs: results against NumPy, the command line's values."""
import gc
import json
import os
import signal
import threading

import numpy as np
import pytest

import gxc


def test_version_is_the_command_lines(run_cli):
    status, out, _ = run_cli("--version")
    assert status == 0
    assert out.strip() == f"gxc {gxc.__version__}"


def test_load_describes_the_model(linear_relu):
    path, _ = linear_relu
    model = gxc.load(path)
    assert model.name == "linear_relu"
    assert model.inputs == [("x", "f32[3,4]")]
    assert model.outputs == [("y", "f32[3,5]")]


@pytest.mark.parametrize("options", [{"devices": "cpu"}, {"sim_gpus": 2, "placement": "auto"},
                                     {"sim_gpus": 2, "placement": "data-parallel"},
                                     {"sim_gpus": 2, "placement": "pipeline"}])
def test_numpy_in_numpy_out_matches_numpy(linear_relu, options):
    path, reference = linear_relu
    exe = gxc.compile(gxc.load(path), **options)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    out = exe(x=x)
    assert list(out) == ["y"]
    assert isinstance(out["y"], np.ndarray) and out["y"].dtype == np.float32
    np.testing.assert_allclose(out["y"], reference(x), rtol=1e-5, atol=1e-6)


def test_same_answers_as_the_command_line(models, run_cli, tmp_path):
    x = np.random.default_rng(2).standard_normal((64, 13)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    status, _, err = run_cli("run", models / "mlp.yaml", "--devices", "cpu", "--input",
                             f"x={tmp_path / 'x.npy'}", "--output", tmp_path / "out")
    assert status == 0, err
    out = gxc.compile(models / "mlp.yaml", devices="cpu")(x=x)
    np.testing.assert_array_equal(out["fc3"], np.load(tmp_path / "out" / "fc3.npy"))


def test_an_input_left_out_gets_gxc_runs_values(models, run_cli, tmp_path):
    status, _, err = run_cli("run", models / "mlp.yaml", "--devices", "cpu", "--output",
                             tmp_path / "out")
    assert status == 0, err
    out = gxc.compile(models / "mlp.yaml", devices="cpu")()
    np.testing.assert_array_equal(out["fc3"], np.load(tmp_path / "out" / "fc3.npy"))


def test_torch_in_torch_out(linear_relu):
    torch = pytest.importorskip("torch")
    path, reference = linear_relu
    exe = gxc.compile(path, devices="cpu")
    x = torch.randn(3, 4, requires_grad=True)
    out = exe(x=x)
    assert isinstance(out["y"], torch.Tensor) and out["y"].dtype == torch.float32
    np.testing.assert_allclose(out["y"].numpy(), reference(x.detach().numpy()), rtol=1e-5,
                               atol=1e-6)


def test_inputs_are_read_where_they_lie(linear_relu):
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    assert gxc._gxc._input_address(x) == x.ctypes.data
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x)
    assert gxc._gxc._input_address(t) == t.data_ptr()


def test_a_strided_input_is_copied_and_read_right(linear_relu):
    path, reference = linear_relu
    wide = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    x = wide.T  # [3, 4], not row-major
    assert not x.flags.c_contiguous
    assert gxc._gxc._input_address(x) != x.ctypes.data
    out = gxc.compile(path, devices="cpu")(x=x)
    np.testing.assert_allclose(out["y"], reference(np.ascontiguousarray(x)), rtol=1e-5,
                               atol=1e-6)


def test_an_output_outlives_its_executable(linear_relu):
    path, reference = linear_relu
    x = np.ones((3, 4), np.float32)
    exe = gxc.compile(path, devices="cpu")
    out = exe(x=x)["y"]
    assert not out.flags.owndata  # gxc's buffer, not a copy NumPy made
    del exe
    gc.collect()
    np.testing.assert_allclose(out, reference(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dims", [None, {"batch": 3}])
def test_new_shapes_bind_symbolic_dims(linear_relu, dims):
    path, reference = linear_relu
    exe = gxc.compile(gxc.load(path, dims=dims), devices="cpu")
    for batch in (3, 7, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        out = exe(x=x)
        assert out["y"].shape == (batch, 5)
        np.testing.assert_allclose(out["y"], reference(x), rtol=1e-5, atol=1e-6)


def test_what_the_command_line_shows(models, run_cli, tmp_path):
    path = models / "very_big_module_small.yaml"
    exe = gxc.compile(path, sim_gpus=2, placement="auto")
    assert exe.devices == ["cuda:0", "cuda:1"]
    _, _, said = run_cli("compile", path, "--sim-gpus", "2", "--placement", "auto",
                         "--print-ir-after", "assign-devices", "--explain", "-o", tmp_path / "ir")
    after = said.split("// ----- IR after assign-devices -----\n", 1)[1].splitlines(True)
    ir = "".join(line for line in after if not line.startswith("gxc: "))
    assert exe.ir(after="assign-devices") == ir
    explained = [line[len("gxc: explain: "):] for line in said.splitlines()
                 if line.startswith("gxc: explain: ")]
    assert exe.explain().splitlines() == explained
    assert exe.ir() == (tmp_path / "ir").read_text()
    _, plan, _ = run_cli("compile", path, "--sim-gpus", "2", "--placement", "auto", "--emit",
                         "plan")
    assert exe.plan() == plan
    out = exe(x=np.ones((200, 8), np.float32))
    report = exe.report()
    assert report["platform"] == "2 virtual GPUs"
    assert report["outputs"] == {"y": {"dtype": "f32", "shape": [200, 8]}}
    assert [d["device"] for d in report["devices"]] == ["cpu", "cuda:0", "cuda:1"]
    exe.trace(tmp_path / "trace.json")
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert out["y"].shape == (200, 8)


def test_two_executables_run_from_two_threads(linear_relu, models):
    path, reference = linear_relu
    first = gxc.compile(path, devices="cpu")
    second = gxc.compile(models / "mlp.yaml", sim_gpus=2, placement="data-parallel")
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    alone = second()["fc3"]
    results, failures = {}, []

    def run(name, call):
        try:
            for _ in range(20):
                results[name] = call()
        except Exception as error:  # noqa: BLE001: reported below
            failures.append(error)

    threads = [threading.Thread(target=run, args=("first", lambda: first(x=x)["y"])),
               threading.Thread(target=run, args=("second", lambda: second()["fc3"]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    np.testing.assert_allclose(results["first"], reference(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(results["second"], alone)


def test_two_onnx_models_of_one_path_keep_their_own_weights(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.onnx"
    x = torch.randn(2, 3)
    executables, expected = [], []
    for seed in (1, 2):  # the second export replaces the first file
        torch.manual_seed(seed)
        module = torch.nn.Linear(3, 4)
        torch.onnx.export(module, (x,), str(path), input_names=["x"], output_names=["y"])
        executables.append(gxc.compile(gxc.load(path), devices="cpu"))
        expected.append(module(x).detach().numpy())
    # Params are read at the first run, after both loads.
    for exe, want in zip(executables, expected):
        np.testing.assert_allclose(exe(x=x.numpy())["y"], want, rtol=1e-5, atol=1e-6)


def test_one_executable_called_from_two_threads_takes_turns(linear_relu):
    path, reference = linear_relu
    exe = gxc.compile(path, devices="cpu")
    inputs = {rows: np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
              for rows in (3, 5)}
    failures = []

    def run(rows):
        try:
            for _ in range(20):
                out = exe(x=inputs[rows])["y"]
                np.testing.assert_allclose(out, reference(inputs[rows]), rtol=1e-5, atol=1e-6)
        except Exception as error:  # noqa: BLE001: reported below
            failures.append(error)

    threads = [threading.Thread(target=run, args=(rows,)) for rows in inputs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_ctrl_c_stops_a_host_run_and_leaves_the_executable_usable(tmp_path):
    # 40 matmuls of 1024x1024 (and 40 such params made at the first run): seconds on two cores,
    # interrupted 0.05 s in. Whenever the signal lands in the block, before the run or in it,
    # KeyboardInterrupt is what the block raises.
    layers = "".join(f"  - {{name: m{i}, op: matmul, inputs: [{'x' if i == 0 else f'm{i - 1}'}, "
                     f"w{i}]}}\n" for i in range(40))
    params = "".join(f"  w{i}: {{shape: [1024, 1024], init: {{normal: {{std: 0.03}}}}}}\n"
                     for i in range(40))
    path = tmp_path / "long.yaml"
    path.write_text(f"gxc: 1\nname: long\ninputs:\n  x: {{shape: [1024, 1024]}}\nparams:\n{params}"
                    f"layers:\n{layers}outputs: [m39]\n")
    exe = gxc.compile(path, devices="cpu")
    x = np.ones((1024, 1024), np.float32)
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            timer.start()
            exe(x=x)
    finally:
        timer.cancel()
    # Stopped before its end: no run has finished, so there is no report yet.
    with pytest.raises(gxc.UsageError, match="has not run yet"):
        exe.report()
    small = gxc.compile(path, devices="cpu")
    np.testing.assert_array_equal(exe(x=x)["m39"], small(x=x)["m39"])
