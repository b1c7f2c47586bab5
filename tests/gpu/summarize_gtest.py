#!/usr/bin/env python3
"""Sums up the JSON reports of GoogleTest shards (scripts/gpu-check.sh): counts, then each
failure with its first message lines and each skip with its reason.

Usage: tests/gpu/summarize_gtest.py REPORT.json...   (exit 1 when a test failed or none ran)
A skip's reason is not in GoogleTest's JSON: it is read from the shard's output beside the
report (REPORT.log), where the line after "FILE:LINE: Skipped" holds it.
"""

import json
import pathlib
import sys


def skip_reasons(log):
    reasons, test, lines = {}, None, log.read_text(errors="replace").splitlines() if log.exists() else []
    for i, line in enumerate(lines):
        if line.startswith("[ RUN      ] "):
            test = line[len("[ RUN      ] "):].strip()
        elif line.endswith(": Skipped") and test and i + 1 < len(lines):
            reasons[test] = lines[i + 1].strip()
    return reasons


def main():
    passed, failed, skipped = [], [], []
    for path in sys.argv[1:]:
        with open(path) as f:
            report = json.load(f)
        reasons = skip_reasons(pathlib.Path(path).with_suffix(".log"))
        for suite in report.get("testsuites", []):
            for test in suite.get("testsuite", []):
                name = f"{suite['name']}.{test['name']}"
                if test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
                    skipped.append((name, reasons.get(name, "no reason given")))
                elif test.get("failures"):
                    first = test["failures"][0].get("failure", "").strip().splitlines()
                    failed.append((name, first[:3]))
                else:
                    passed.append(name)
    print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped")
    for name, lines in failed:
        print(f"- FAILED {name}: {' / '.join(line.strip() for line in lines)}")
    for name, reason in skipped:
        print(f"- skipped {name}: {reason}")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
