#!/usr/bin/env python3
"""Checks that a build without CUDA runs every test a build with CUDA runs, except the ones
that need NVRTC, the CUDA toolkit or a GPU, and that it lists those as skipped, saying why.

Usage: compare_cuda_builds.py [--not-rerun NAME]... WITH_CUDA_BUILD WITHOUT_CUDA_BUILD

Each build folder holds ctest.xml, the JUnit report of `ctest --output-junit ctest.xml` run
there (scripts/test.sh runs both), and tests/unit-results/, GoogleTest's XML report of each
shard of the unit tests that ctest ran (tests/CMakeLists.txt): a unit test is matched by its
own name, "Prefix/Suite.Test/param", not by its shard's. Tests are matched by name. The rules:
  - a test that ran in the CUDA build runs in the other, or skips there saying that gxc was
    built without CUDA (it needs NVRTC);
  - a test of tests/unit/cuda_*.cpp, which only a CUDA build compiles, is covered by its
    file's NotBuiltWithoutCuda.<file> test, which skips saying so;
  - every other test of the CUDA build exists in the other too, and every test the other
    skips was skipped in the CUDA build as well (a GPU test) or says it was built without CUDA;
  - nothing failed;
  - a test named by --not-rerun ran (and passed) in the CUDA build and is absent from the
    other: it runs no gxc, so scripts/test.sh runs it once.
Prints both builds' totals (tests, run, skipped) and exits 1 on any breach.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

WITHOUT_CUDA = "built without CUDA"


UNIT_SHARD = re.compile(r"unit_tests_\d+_of_\d+")


def ctest_results(build):
    """name -> (status, output) from BUILD/ctest.xml, each unit test shard replaced by the tests
    it ran; status is run, fail or notrun."""
    report = pathlib.Path(build) / "ctest.xml"
    if not report.exists():
        sys.exit(f"compare_cuda_builds: {report} is missing; run `ctest --output-junit ctest.xml` "
                 f"in {build} first")
    results = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = case.get("name")
        status, output = case.get("status"), case.findtext("system-out") or ""
        if UNIT_SHARD.fullmatch(name) and status != "fail":
            results.update(unit_results(pathlib.Path(build) / "tests" / "unit-results" /
                                        f"{name}.xml"))
        results[name] = (status, output)
    return results


def unit_results(report):
    """name -> (status, output) of the tests of one unit test shard, from GoogleTest's report."""
    if not report.exists():
        sys.exit(f"compare_cuda_builds: {report} is missing, though ctest ran its shard")
    results = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None:
            results[name] = ("fail", "".join(case.find("failure").itertext()))
        elif case.get("result") == "skipped" or skipped is not None:
            results[name] = ("notrun", skipped.get("message", "") if skipped is not None else "")
        else:
            results[name] = ("run", "")
    return results


def test_of(name):
    """'Prefix/Suite.Test/param' -> 'Prefix/Suite.Test', the part that names the code."""
    suite, _, test = name.partition(".")
    return f"{suite}.{test.split('/')[0]}"


def unit_tests(build):
    """Full gtest name -> the source file that defines it, for every unit test BUILD has."""
    binary = pathlib.Path(build) / "tests" / "gxc_unit_tests"
    with tempfile.TemporaryDirectory() as folder:
        listing = pathlib.Path(folder) / "tests.json"
        subprocess.run([str(binary), "--gtest_list_tests", f"--gtest_output=json:{listing}"],
                       check=True, stdout=subprocess.DEVNULL)
        suites = json.loads(listing.read_text())["testsuites"]
    return {f"{suite['name']}.{test['name']}": pathlib.Path(test["file"]).name
            for suite in suites for test in suite["testsuite"]}


def unreported(build, listed, results):
    """The unit tests BUILD lists that no shard's report has: a shard count the reports do not
    share, or a shard that ran fewer tests than it was given."""
    return [f"{name}: in {build}'s unit tests, in no shard's report"
            for name in listed if name not in results]


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--not-rerun", action="append", default=[], metavar="NAME")
    parser.add_argument("with_cuda")
    parser.add_argument("without_cuda")
    args = parser.parse_args()
    with_cuda, without_cuda = args.with_cuda, args.without_cuda
    a, b = ctest_results(with_cuda), ctest_results(without_cuda)
    listed_a, listed_b = unit_tests(with_cuda), unit_tests(without_cuda)
    files = {test_of(name): file for name, file in listed_a.items()}
    problems = unreported(with_cuda, listed_a, a) + unreported(without_cuda, listed_b, b)
    for name in args.not_rerun:
        if a.get(name, ("missing",))[0] != "run":
            problems.append(f"{name}: named by --not-rerun, but it did not run with CUDA")
        elif name in b:
            problems.append(f"{name}: named by --not-rerun, but it ran without CUDA too")
        else:
            del a[name]

    needs_nvrtc, needs_toolkit = [], {}
    for name, (status, _) in a.items():
        file = files.get(test_of(name), "")
        if file.startswith("cuda_") and file.endswith(".cpp"):
            needs_toolkit.setdefault(file, []).append(name)
            continue
        if name not in b:
            problems.append(f"{name}: in the CUDA build only")
            continue
        other, output = b[name]
        if status == "run" and other != "run":
            if other == "notrun" and WITHOUT_CUDA in output:
                needs_nvrtc.append(name)
            else:
                problems.append(f"{name}: ran with CUDA, {other} without, not saying why")
    for file, names in needs_toolkit.items():
        stand_in = f"NotBuiltWithoutCuda.{file.split('.')[0]}"
        status, output = b.get(stand_in, ("missing", ""))
        if status != "notrun" or WITHOUT_CUDA not in output:
            problems.append(f"{file}: {len(names)} tests, and {stand_in} is {status}, not skipped")
    for name, (status, output) in b.items():
        if status == "fail":
            problems.append(f"{name}: failed without CUDA")
        elif status == "notrun" and WITHOUT_CUDA not in output and a.get(name, ("",))[0] != "notrun":
            problems.append(f"{name}: skipped without CUDA only, not saying why")
    problems += [f"{name}: failed with CUDA" for name, (s, _) in a.items() if s == "fail"]

    def counts(results):
        run = sum(status == "run" for status, _ in results.values())
        skipped = sum(status == "notrun" for status, _ in results.values())
        return f"{len(results)} tests, {run} run, {skipped} skipped"

    print(f"with CUDA    ({with_cuda}): {counts(a)}")
    print(f"without CUDA ({without_cuda}): {counts(b)}")
    toolkit_tests = sum(len(names) for names in needs_toolkit.values())
    print(f"left out without CUDA, listed as skipped: {len(needs_nvrtc)} tests that need NVRTC; "
          f"{len(needs_toolkit)} files of {toolkit_tests} tests that need the CUDA toolkit "
          f"(GPU tests among them), one skipped test each")
    if problems:
        print(f"{len(problems)} problems:", *problems, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
