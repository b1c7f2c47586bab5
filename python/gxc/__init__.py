"""gxc from Python: load a model, compile it for devices, run it on arrays or tensors.

    import gxc
    model = gxc.load("model.yaml", dims={"batch": 8})      # or "model.onnx"
    exe = gxc.compile(model, sim_gpus=2, placement="auto")  # devices="cpu", devices=[0, 1]
    out = exe(x=numpy_array)                                # {"fc3": array}; torch in, torch out

Every option is the command line's (docs/cli.md), with its name, default, checks and
messages; see docs/python.md.
"""

import os

# Before the engine is loaded: how long a waiting OpenMP thread spins before it sleeps, as the
# gxc command sets it (tools/gxc_launcher.cpp, kSpinIterations), so that a process sharing its
# cores with another never spins away a time slice. libgomp reads it once, when it is loaded:
# a process that loaded it earlier (through torch, say) keeps its own setting.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from . import _gxc  # noqa: E402
from ._errors import DeviceError, Error, ModelError, UsageError  # noqa: E402

__version__ = _gxc.version()
__all__ = ["load", "compile", "from_torch", "Trainer", "Model", "Executable", "Error",
           "ModelError", "UsageError", "DeviceError", "__version__"]

Model = _gxc.Model


def load(path, weights=None, dims=None):
    """Reads a gxc YAML or ONNX model and checks it; errors are raised here.

    ``weights``: a safetensors file, as ``--weights``; ``dims``: sizes of symbolic
    dimensions by name, as ``--dim NAME=N``.
    """
    dim_options = [f"{name}={size}" for name, size in (dims or {}).items()]
    return _gxc.load(os.fspath(path), None if weights is None else os.fspath(weights),
                     dim_options)


def _devices_option(devices):
    if devices is None or isinstance(devices, str):
        return devices
    if isinstance(devices, int):
        return str(devices)
    return ",".join(str(device) for device in devices)


def compile(model, devices=None, sim_gpus=None, placement=None, microbatches=None,
            strict=False, arch=None):
    """Compiles ``model`` (from :func:`load`, or a path) for its devices.

    The options are ``gxc run``'s: ``devices`` ("cpu", 0, [0, 1] or "0,1"), ``sim_gpus``
    (N or "N:MEM"), ``placement`` ("manual", "auto", "data-parallel", "pipeline"),
    ``microbatches``, ``strict``, ``arch``. ``None`` leaves the command line's default.
    """
    if not isinstance(model, Model):
        model = load(model)
    return Executable(_gxc.compile(model, _devices_option(devices),
                                   None if sim_gpus is None else str(sim_gpus), placement,
                                   microbatches, strict, arch))


def from_torch(module, example_args, dynamic_shapes=None):
    """Not built yet: refused, saying what works today."""
    raise NotImplementedError(
        "gxc.from_torch is not built yet: export the module to ONNX (torch.onnx.export) and "
        "pass the .onnx file to gxc.load")


class Trainer:
    """Not built yet: refused, saying what works today."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "gxc.Trainer is not built yet: train with the command line, `gxc train MODEL --data "
            "FILE.npz` (docs/cli.md)")


def _is_torch(value):
    return type(value).__module__.split(".")[0] == "torch"


class Executable:
    """A compiled model: call it with its inputs by name.

    Inputs are NumPy arrays or torch tensors (anything with ``__dlpack__``); an input left
    out gets the values ``gxc run`` gives an input without a file. The outputs come back as a
    dict by output name, torch tensors when any input was one, NumPy arrays otherwise, each
    holding the buffer gxc wrote (no copy).
    """

    def __init__(self, compiled):
        self._compiled = compiled

    def __call__(self, **inputs):
        framework = "torch" if any(_is_torch(v) for v in inputs.values()) else "numpy"
        arrays = {}
        for name, value in inputs.items():
            if _is_torch(value):
                value = value.detach()  # what gxc reads; gradients are the Trainer's
            if not hasattr(value, "__dlpack__"):
                raise UsageError(f"gxc: error: input '{name}': expected a NumPy array or a torch "
                                 f"tensor, got {type(value).__name__}")
            arrays[name] = value
        return self._compiled.run(arrays, framework)

    @property
    def devices(self):
        """The devices the plan runs on: ["cpu"], or ["cuda:0", "cuda:1", ...]."""
        return self._compiled.devices

    @property
    def notes(self):
        """What the compile noted, one line each (as ``gxc run`` prints them)."""
        return self._compiled.notes

    def ir(self, after=None):
        """The IR after the pass ``after`` (``--print-ir-after``), or after the whole pipeline."""
        return self._compiled.ir(after or "")

    def explain(self):
        """For every layer, the device chosen and why (``--explain``), one line each."""
        return "\n".join(self._compiled.explain()) + "\n"

    def plan(self):
        """The executable plan (``gxc compile --emit plan``)."""
        return self._compiled.plan()

    def report(self):
        """The last run's summary, the dict ``gxc run --report`` writes."""
        import json

        return json.loads(self._compiled.report())

    def trace(self, path):
        """Writes the last run's Chrome trace (``--trace``) to ``path``, whole or not at all."""
        text = self._compiled.trace()
        partial = f"{os.fspath(path)}.partial"
        with open(partial, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, path)
