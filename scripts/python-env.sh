#!/usr/bin/env bash
# Creates .venv/ in the repository root with the Python packages the tests need:
# tests/onnx/requirements-nets.txt (the pinned onnx and numpy of the conformance runner, and
# ONNX Runtime, the reference of the exported networks) and tests/train/requirements.txt
# (TensorBoard, whose reader checks the event files of `gxc train --tensorboard`). It prints
# nothing and does nothing when the venv already has them: the checksum of every
# requirements file is kept in the venv once pip has installed them, so an edited pin in any
# of them reinstalls and unchanged ones are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# Installed by pip; tests/onnx/requirements.txt comes in through requirements-nets.txt's -r.
requirements=(tests/onnx/requirements-nets.txt tests/train/requirements.txt)
# Checksummed: every file that names a pin, included ones too.
pinned=("${requirements[@]}" tests/onnx/requirements.txt)
venv=.venv
stamp="$venv/requirements.sha256"
wanted=$(cat "${pinned[@]}" | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
echo "== python environment in $venv (${requirements[*]})"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "${requirements[@]/#/-r}"
echo "$wanted" > "$stamp"
