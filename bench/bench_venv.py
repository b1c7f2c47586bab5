"""The benchmarks' Python environment, .venv-bench/ in the repository root: PyTorch, ONNX Runtime
and the rest of the peers, from PyPI (bench/requirements-peers.txt, and PyTorch without its CUDA
dependency tree from bench/requirements-peers-torch.txt, with `pip install --no-deps`).

ensure_venv() installs them when the venv is missing or a pin changed (a checksum of both files
is kept in the venv, as scripts/python-env.sh does), then runs the calling script again with the
venv's python when another one runs it.
"""

import hashlib
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-bench"
PYTHON = VENV / "bin" / "python"
REQUIREMENTS = ROOT / "bench" / "requirements-peers.txt"
TORCH_REQUIREMENTS = ROOT / "bench" / "requirements-peers-torch.txt"


def _pip_install(*arguments):
    subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", *arguments], check=True)


def ensure_venv():
    stamp = VENV / "requirements.sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes() + TORCH_REQUIREMENTS.read_bytes()).hexdigest()
    if not (PYTHON.exists() and stamp.exists() and stamp.read_text().strip() == wanted):
        print(f"== python environment in {VENV.name} ({REQUIREMENTS.relative_to(ROOT)}, "
              f"{TORCH_REQUIREMENTS.relative_to(ROOT)})", file=sys.stderr, flush=True)
        if not PYTHON.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        _pip_install("-r", str(REQUIREMENTS))
        _pip_install("--no-deps", "-r", str(TORCH_REQUIREMENTS))
        stamp.write_text(wanted + "\n")
    if pathlib.Path(sys.prefix).resolve() != VENV.resolve():
        script = pathlib.Path(sys.argv[0]).resolve()
        os.execv(str(PYTHON), [str(PYTHON), str(script), *sys.argv[1:]])
