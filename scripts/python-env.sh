#!/usr/bin/env bash
# Creates .venv/ in the repository root with the Python packages the ONNX tests need
# (tests/onnx/requirements-nets.txt: the pinned onnx and numpy of the conformance runner, and
# ONNX Runtime, the reference of the exported networks), and prints nothing and does
# nothing when it already has them: the requirements file's checksum is kept in the venv once
# pip has installed it, so an edited pin reinstalls and an unchanged one is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tests/onnx/requirements-nets.txt
venv=.venv
stamp="$venv/requirements.sha256"
wanted=$(cat "$requirements" tests/onnx/requirements.txt | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
echo "== python environment in $venv ($requirements)"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
echo "$wanted" > "$stamp"
