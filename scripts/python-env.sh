#!/usr/bin/env bash
# Creates .venv/ in the repository root with the Python packages the ONNX conformance runner
# needs (tests/onnx/requirements.txt: the pinned onnx and numpy), and prints nothing and does
# nothing when it already has them: the requirements file's checksum is kept in the venv once
# pip has installed it, so an edited pin reinstalls and an unchanged one is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tests/onnx/requirements.txt
venv=.venv
stamp="$venv/requirements.sha256"
wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
echo "== python environment in $venv ($requirements)"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
echo "$wanted" > "$stamp"
