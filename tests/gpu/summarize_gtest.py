#!/usr/bin/env python3
"""Sums up the JSON reports of GoogleTest shards (scripts/gpu-check.sh): counts, then each
failure with its first message line and each skip with its reason, as Markdown.

Usage: tests/gpu/summarize_gtest.py REPORT.json...   (exit 1 when a test failed or none ran)
"""

import json
import sys


def main():
    passed, failed, skipped = [], [], []
    for path in sys.argv[1:]:
        with open(path) as f:
            report = json.load(f)
        for suite in report.get("testsuites", []):
            for test in suite.get("testsuite", []):
                name = f"{suite['name']}.{test['name']}"
                if test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
                    reason = test.get("skipped", [{}])
                    reason = reason[0].get("message", "") if reason else ""
                    skipped.append((name, reason.strip().splitlines()[-1:] or [""]))
                elif test.get("failures"):
                    first = test["failures"][0].get("failure", "").strip().splitlines()
                    failed.append((name, first[:3]))
                else:
                    passed.append(name)
    print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped")
    for name, lines in failed:
        print(f"- FAILED {name}: {' / '.join(line.strip() for line in lines)}")
    for name, reason in skipped:
        print(f"- skipped {name}: {reason[0].strip()}")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
