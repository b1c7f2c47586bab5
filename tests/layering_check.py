#!/usr/bin/env python3
"""Checks every #include of the project's sources against the dependency rule.

The rule is the table between the `layering: begin` and `layering: end` markers of
docs/architecture.md: each row names a folder and the folders its files may include. A folder
may always include itself; a folder without a row of its own (runtime/sim/ is its own row,
not part of runtime/'s) is not checked. Prints every include that breaks the rule, one line
each, and exits 1 if there is one; exits 2 if the table cannot be read.

Usage: layering_check.py SOURCE_DIR
"""
import os
import pathlib
import re
import sys


def read_rule(doc: pathlib.Path) -> dict:
    text = doc.read_text()
    match = re.search(r"<!-- layering: begin -->(.*?)<!-- layering: end -->", text, re.S)
    if not match:
        sys.exit(f"{doc}: no layering table between its markers")
    rule = {}
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`")
        rule[folder] = set(re.findall(r"`([^`]+)`", cells[1])) | {folder}
    if "ir/" not in rule or "passes/" not in rule:
        print(f"{doc}: the layering table lacks ir/ or passes/", file=sys.stderr)
        sys.exit(2)
    return rule


def folder_of(path: str, rule: dict):
    """The deepest folder of the rule that holds `path`, or None."""
    best = None
    for folder in rule:
        if path.startswith(folder) and "/" not in path[len(folder):]:
            best = folder
    return best


def sources(root: pathlib.Path):
    """Every file under root but build folders and hidden ones (.git, Python virtual
    environments: thousands of headers that are not the project's)."""
    for folder, subfolders, files in os.walk(root):
        top = pathlib.Path(folder) == root
        subfolders[:] = [d for d in subfolders
                         if not d.startswith(".") and not (top and "build" in d)]
        for name in files:
            yield pathlib.Path(folder) / name


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    rule = read_rule(root / "docs" / "architecture.md")
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    problems = []
    checked = 0
    for source in sorted(sources(root)):
        if source.suffix not in (".h", ".cpp", ".in"):
            continue
        relative = source.relative_to(root).as_posix()
        folder = folder_of(relative, rule)
        if folder is None:
            continue
        checked += 1
        for number, line in enumerate(source.read_text().splitlines(), 1):
            found = include.match(line)
            if not found or "/" not in found.group(1):
                continue
            target = folder_of(found.group(1), rule)
            if target is not None and target not in rule[folder]:
                problems.append(f"{relative}:{number}: {folder} may not include {target} "
                                f"(\"{found.group(1)}\"); see docs/architecture.md")
    for problem in problems:
        print(problem)
    print(f"layering: {checked} files checked, {len(problems)} includes against the rule")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
