"""Measure a JAX library's own test suite on invarax: a deterministic sample of each test
file, run under JAX and under the import alias (``python -m invarax.compat``).

For each test file of ``TESTS_DIR`` (a library's ``tests`` folder, e.g. lineax's): collect its
test ids (under JAX), keep every k-th, k the smallest step that leaves at most ``--per-file``
ids (all of a small file), run them with JAX and then with every JAX/Equinox import served by
invarax (one pytest process per file and mode, each with a wall-clock ``--timeout``), and
print per file: the sampled ids, how many ran out of time on JAX, how many pass on JAX, how
many of those pass under the alias, and the alias's failures grouped by the first line of
their message. Ids of a process that timed out count as not passed. Run it at low priority
on a shared machine:

    nice -n 19 python tools/library_suites.py /path/to/lineax/tests --per-file 25

The invarax imported is the one on ``sys.path`` (PYTHONPATH); the library must be
installed (pip install lineax diffrax optimistix --no-deps).
"""

from __future__ import annotations

import argparse
import collections
import math
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

PYTEST = ["-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-o",
          "addopts=", "-W", "ignore"]


def collect(root: Path, test_file: str, timeout: float) -> list:
    """The test ids of ``test_file`` (relative to ``root``), as pytest collects them."""
    run = subprocess.run([sys.executable, *PYTEST, "--collect-only", test_file], cwd=root,
                         capture_output=True, text=True, timeout=timeout)
    return [line.strip() for line in run.stdout.splitlines() if "::" in line]


def sample(ids: list, most: int) -> list:
    """Every k-th id, k the smallest step leaving at most ``most``."""
    step = max(1, math.ceil(len(ids) / most))
    return ids[::step]


def outcomes(root: Path, ids: list, alias: bool, timeout: float) -> dict:
    """id -> ``None`` (passed), or the first line of its failure (``"timeout"`` if the
    process ran out of time, ``"skipped"`` for a skip)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        cmd = [sys.executable, *(["-m", "invarax.compat"] if alias else []), *PYTEST,
               f"--junitxml={report}", *ids]
        try:
            subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        if not report.exists():
            return {i: "timeout" for i in ids}
        found = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            module = case.get("classname", "").split(".")
            # junit's classname is module.Class (or module); ids are path::[Class::]name
            name = case.get("name")
            failure = next((c for c in case if c.tag in ("failure", "error")), None)
            skipped = next((c for c in case if c.tag == "skipped"), None)
            result = None
            if failure is not None:
                text = (failure.get("message") or failure.text or failure.tag).strip()
                result = text.splitlines()[0][:160] if text else failure.tag
            elif skipped is not None:
                result = "skipped"
            found[(module[-1] if module else "", name)] = result
    out = {}
    for i in ids:
        parts = i.split("::")
        key = (parts[-2] if len(parts) > 2 else Path(parts[0]).stem, parts[-1])
        out[i] = found.get(key, "timeout")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests_dir", type=Path)
    parser.add_argument("--per-file", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per pytest process")
    parser.add_argument("--files", nargs="*", help="test file names (default: all test_*.py)")
    args = parser.parse_args(argv)
    tests = args.tests_dir.resolve()
    root = tests.parent
    files = sorted(args.files or [p.name for p in tests.glob("test_*.py")])
    total = collections.Counter()
    print("| file | collected | sampled | timed out on JAX | pass on JAX "
          "| of those, pass on invarax |")
    print("|---|---:|---:|---:|---:|---:|")
    causes = collections.Counter()
    for name in files:
        rel = f"{tests.name}/{name}"
        ids = collect(root, rel, args.timeout)
        chosen = sample(ids, args.per_file)
        if not chosen:
            print(f"| {name} | 0 | 0 | - | - | - |", flush=True)
            continue
        jax_out = outcomes(root, chosen, alias=False, timeout=args.timeout)
        passing = [i for i in chosen if jax_out[i] is None]
        late = sum(v == "timeout" for v in jax_out.values())
        ours = outcomes(root, passing, alias=True, timeout=args.timeout) if passing else {}
        ok = sum(v is None for v in ours.values())
        for v in ours.values():
            if v is not None:
                causes[(name, v)] += 1
        total.update(collected=len(ids), sampled=len(chosen), late=late, jax=len(passing),
                     ours=ok)
        print(f"| {name} | {len(ids)} | {len(chosen)} | {late} | {len(passing)} | {ok} |",
              flush=True)
    share = 100 * total["ours"] / max(total["jax"], 1)
    print(f"| all | {total['collected']} | {total['sampled']} | {total['late']} | "
          f"{total['jax']} | {total['ours']} ({share:.1f}%) |")
    if causes:
        print("\nFailures under the alias (file, first line, count):")
        for (name, cause), n in causes.most_common():
            print(f"  {name}: {n} x {cause}")


if __name__ == "__main__":
    main()
