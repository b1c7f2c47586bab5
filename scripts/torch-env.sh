#!/usr/bin/env bash
# Creates .venv-torch/ in the repository root: Debian's python3 with its own packages visible
# (--system-site-packages: python3-torch and python3-numpy, and python3-sklearn where it is
# installed), plus what tests/train/requirements-torch.txt pins (safetensors, which Debian does
# not package) and python/requirements-test.txt (nanobind and pytest). This is the Python of
# tests/fixtures/make_train_fixtures.py, the PyTorch reference of `gxc train`, and the one the
# Python module is built for and tested in (python/CMakeLists.txt); torch is never installed
# from pip, so the venv stays small. Prints
# nothing and does nothing when the venv is up to date: the requirements file's checksum is kept
# in the venv once pip has installed it, so an edited pin reinstalls and an unchanged one is
# left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=(tests/train/requirements-torch.txt python/requirements-test.txt)
venv=.venv-torch
stamp="$venv/requirements.sha256"
wanted=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
echo "== python environment in $venv (${requirements[*]}, Debian's torch)"
# Debian's interpreter by its path: the python3 first on PATH (a pyenv's) sees no Debian package.
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "${requirements[@]/#/-r}"
if ! "$venv/bin/python" -c "import torch, numpy, safetensors.torch"; then
  echo "$venv: no torch or numpy: Debian's python3-torch is missing (scripts/install-deps.sh)" >&2
  exit 1
fi
echo "$wanted" > "$stamp"
