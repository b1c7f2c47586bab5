"""Runs a command and succeeds only when it exits with the given status.

lit's `not` accepts any failure; gxc's exit statuses (cli.md: 1 model or input, 2 command
line, 3 device or runtime) are part of its contract, so tests check them exactly:
    RUN: %expect-exit 1 gxc run %s 2>&1 | FileCheck %s
The command's stdout and stderr pass through unchanged.
"""
import subprocess
import sys

expected = int(sys.argv[1])
status = subprocess.call(sys.argv[2:])
if status != expected:
    sys.stderr.write(f"expect-exit: expected exit status {expected}, got {status}\n")
    sys.exit(1)
