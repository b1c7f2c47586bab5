"""Errors as exceptions: the class of the command line's exit status, its exact line, and
where (file, line, column; the ONNX node as `layer`)."""
import pathlib

import numpy as np
import pytest

import gxc


def cli_error_line(run_cli, *args):
    status, _, err = run_cli(*args)
    lines = err.strip().splitlines()
    return status, lines[-1]


def test_model_error_is_the_command_lines(run_cli, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("gxc: 1\nname: bad\ninputs:\n  x: {shape: [2, 3]}\nlayers:\n"
                    "  - {name: y, op: relu, inputs: [nowhere]}\noutputs: [y]\n")
    status, line = cli_error_line(run_cli, "run", path, "--devices", "cpu")
    assert status == 1
    with pytest.raises(gxc.ModelError) as raised:
        gxc.load(path)
    error = raised.value
    assert str(error) == line
    assert isinstance(error, gxc.Error) and error.exit_status == 1
    assert (error.file, error.line) == (str(path), 6)
    assert error.column is not None and line.startswith(f"{path}:6:{error.column}: error: ")


def test_usage_error_is_the_command_lines(run_cli, models):
    status, line = cli_error_line(run_cli, "run", models / "mlp.yaml", "--placement", "sideways")
    assert status == 2
    with pytest.raises(gxc.UsageError) as raised:
        gxc.compile(models / "mlp.yaml", placement="sideways")
    assert str(raised.value) == line
    assert raised.value.file is None and raised.value.line is None
    with pytest.raises(gxc.UsageError, match="only pipeline placement"):
        gxc.compile(models / "mlp.yaml", microbatches=2)


def test_device_error_is_the_command_lines(run_cli, tmp_path):
    inputs = pathlib.Path(__file__).parents[1] / "lit" / "cli" / "Inputs"
    path = inputs / "nll-loss-targets.yaml"
    logp = -np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    target = np.array([0, 7, 1], np.int64)
    np.save(tmp_path / "logp.npy", logp)
    np.save(tmp_path / "target.npy", target)
    status, line = cli_error_line(run_cli, "run", path, "--devices", "cpu", "--input",
                                  f"logp={tmp_path / 'logp.npy'}", "--input",
                                  f"target={tmp_path / 'target.npy'}")
    assert status == 3
    exe = gxc.compile(path, devices="cpu")
    with pytest.raises(gxc.DeviceError) as raised:
        exe(logp=logp, target=target)
    assert str(raised.value) == line
    assert (raised.value.file, raised.value.line, raised.value.column) == (str(path), 7, 5)
    # The executable runs again after a failed run.
    target[1] = 2
    assert exe(logp=logp, target=target)["loss"].shape == ()


def test_inputs_of_the_wrong_name_dtype_or_kind(models):
    exe = gxc.compile(models / "mlp.yaml", devices="cpu")
    declared = f"f32[64,13] ({models / 'mlp.yaml'}:"
    with pytest.raises(gxc.UsageError) as raised:
        exe(z=np.zeros((64, 13), np.float32))
    assert str(raised.value) == "gxc: error: input 'z': the model has no input 'z' (inputs: x)"
    with pytest.raises(gxc.ModelError) as raised:
        exe(x=np.zeros((64, 13), np.float64))
    assert str(raised.value).startswith(
        f"gxc: error: input 'x' is f64[64,13] but the model declares {declared}")
    with pytest.raises(gxc.ModelError) as raised:
        exe(x=np.zeros((64, 13), np.uint8))
    assert str(raised.value) == (
        "gxc: error: input 'x' has an element type gxc has no dtype for (DLPack code 1, 8 bits);"
        " convert it to one of f32, f64, f16, bf16, i32, i64, bool")
    with pytest.raises(gxc.UsageError) as raised:
        exe(x=[[0.0] * 13] * 64)
    assert str(raised.value) == (
        "gxc: error: input 'x': expected a NumPy array or a torch tensor, got list")


def test_what_a_run_cannot_give_is_refused(models, tmp_path):
    exe = gxc.compile(models / "mlp.yaml", devices="cpu")
    with pytest.raises(gxc.UsageError) as raised:
        exe.report()
    assert str(raised.value) == (
        "gxc: error: report(): the executable has not run yet; call it first")
    exe()
    with pytest.raises(gxc.UsageError) as raised:
        exe.trace(tmp_path / "trace.json")
    assert str(raised.value) == (
        "gxc: error: trace(): the host platform records no trace; run on GPUs (sim_gpus=N)")
    assert not (tmp_path / "trace.json").exists()
    path = tmp_path / "to_bf16.yaml"
    path.write_text("gxc: 1\nname: to_bf16\ninputs:\n  x: {shape: [2]}\nlayers:\n"
                    "  - {name: y, op: cast, inputs: [x], dtype: bf16}\noutputs: [y]\n")
    with pytest.raises(gxc.UsageError) as raised:
        gxc.compile(path, devices="cpu")(x=np.ones(2, np.float32))
    assert str(raised.value) == (
        "gxc: error: output 'y' is bf16, which NumPy has no dtype for; pass torch tensors to get"
        " torch tensors back")
    torch = pytest.importorskip("torch")
    out = gxc.compile(path, devices="cpu")(x=torch.tensor([1.5, -2.0]))["y"]
    assert out.dtype == torch.bfloat16 and out.tolist() == [1.5, -2.0]



def test_an_onnx_models_error_names_its_node(run_cli):
    path = (pathlib.Path(__file__).parents[1] / "fixtures" / "onnx" /
            "import" / "mod_of_tensors.onnx")
    status, line = cli_error_line(run_cli, "run", path, "--devices", "cpu")
    assert status == 1
    with pytest.raises(gxc.ModelError) as raised:
        gxc.load(path)
    assert str(raised.value) == line
    assert (raised.value.file, raised.value.layer) == (str(path), "mod")
    assert raised.value.line is None


def test_what_is_not_built_yet_is_refused_saying_what_works():
    with pytest.raises(NotImplementedError, match="export the module to ONNX"):
        gxc.from_torch(object(), ())
    with pytest.raises(NotImplementedError, match="gxc train MODEL --data"):
        gxc.Trainer("model.yaml", loss="mse_loss")


def test_the_ir_after_a_pass_that_does_not_run_is_refused(models):
    exe = gxc.compile(models / "mlp.yaml", devices="cpu")
    with pytest.raises(gxc.UsageError) as raised:
        exe.ir(after="autodiff")  # training's pass: not in a run's pipeline
    assert str(raised.value) == (
        "gxc: error: ir(after='autodiff'): the pass 'autodiff' does not run for this model and "
        "placement")
    with pytest.raises(gxc.UsageError) as raised:
        exe.ir(after="sideways")
    assert str(raised.value).startswith(
        "gxc: error: --print-ir-after: unknown pass 'sideways' (passes: all, ")
