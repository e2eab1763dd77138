"""Run the Python cells of a JAX tutorial (a MyST ``.md`` or an ``.ipynb``) against invarax,
with only the imports changed, and print pass or FAIL per cell.

Each cell runs in one namespace, in order, as in a notebook: a cell whose last statement is
an expression prints that value's repr, as Jupyter displays it. ``%timeit [options] stmt``
runs ``stmt`` once. ``jax`` is replaced by ``invarax`` in import statements only
(``import jax`` -> ``import invarax as jax``, ``from jax.sharding import P`` -> ``from
invarax.sharding import P``); the code is otherwise the tutorial's. The process has 8 CPU
devices (``XLA_FLAGS=--xla_force_host_platform_device_count=8``), as the tutorials ask.
Without ``termcolor`` (one tutorial colours its error messages) a stand-in whose
``colored`` returns the text is used. The tutorials are in JAX's repository, under
docs/notebooks/ (Distributed_arrays_and_automatic_parallelization.md, explicit-sharding.md,
shard_map.md).

Options:
    --jax            run the cells with the real JAX instead (the oracle).
    --compare        also run them with JAX (in a subprocess) and say per cell whether the
                     printed output is the same (with --show, the differing lines).
    --replace A=B    replace the text A by B in every cell first (e.g. 8192=512 to shrink
                     a tutorial's arrays to what 2 cores compute in seconds); repeatable.
    --show           print each cell's output.

Example:
    python tools/run_sharding_tutorials.py explicit-sharding.md --compare
    python tools/run_sharding_tutorials.py Distributed_arrays_and_automatic_parallelization.md \\
        --replace 8192=512
"""

import argparse
import ast
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cells(path: Path) -> list:
    """The source of each Python cell of the tutorial at ``path``."""
    text = path.read_text()
    if path.suffix == ".ipynb":
        return ["".join(c["source"]) for c in json.loads(text)["cells"]
                if c["cell_type"] == "code"]
    out = []
    for block in re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, re.M | re.S):
        block = re.sub(r"\A---\n.*?^---\n", "", block, flags=re.M | re.S)  # cell metadata
        out.append("\n".join(ln for ln in block.splitlines() if not ln.startswith(":")))
    return out


def to_invarax(source: str) -> str:
    """``source`` with ``jax`` replaced by ``invarax`` in its import statements."""
    source = re.sub(r"^(\s*)import jax$", r"\1import invarax as jax", source, flags=re.M)
    source = re.sub(r"^(\s*)import jax\.(\S+) as", r"\1import invarax.\2 as", source, flags=re.M)
    return re.sub(r"^(\s*)from jax(\.\S+)? import", r"\1from invarax\2 import", source,
                  flags=re.M)


def unmagic(source: str) -> str:
    """``%timeit [-n N] [-r R] stmt`` lines as ``stmt`` (run once)."""
    return re.sub(r"^(\s*)%timeit(?:\s+-\w\s*\d+)*\s+(.*)$", r"\1\2", source, flags=re.M)


def run_cell(source: str, namespace: dict) -> None:
    """Run ``source``; print the value of a final expression (as a notebook displays it)."""
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 (the tutorial's code)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)  # noqa: S307
        if value is not None:
            print(repr(value))


def run_all(sources: list, use_jax: bool) -> list:
    """Each cell's ``[ok, output, error]``, run in order in one namespace."""
    if "termcolor" not in sys.modules:  # a tutorial prints errors with it; plain text will do
        try:
            import termcolor  # noqa: F401
        except ImportError:
            stand_in = types.ModuleType("termcolor")
            stand_in.colored = lambda text, *args, **kwargs: text
            sys.modules["termcolor"] = stand_in
    namespace = {"__name__": "__main__"}
    results = []
    for source in sources:
        source = unmagic(source if use_jax else to_invarax(source))
        out = io.StringIO()
        error = None
        try:
            with contextlib.redirect_stdout(out):
                run_cell(source, namespace)
        except Exception as e:  # noqa: BLE001 (a failing cell is reported, the next runs)
            error = f"{type(e).__name__}: {e}"
        results.append([error is None, out.getvalue(), error])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tutorial", type=Path)
    parser.add_argument("--jax", action="store_true")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--replace", action="append", default=[])
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sources = cells(args.tutorial)
    for pair in args.replace:
        old, new = pair.split("=", 1)
        sources = [s.replace(old, new) for s in sources]
    results = run_all(sources, args.jax)
    if args.json:
        json.dump(results, sys.stdout)
        return
    oracle = None
    if args.compare:
        command = [sys.executable, __file__, str(args.tutorial), "--jax", "--json",
                   *[f"--replace={p}" for p in args.replace]]
        oracle = json.loads(subprocess.run(command, capture_output=True, text=True, check=True,
                                           env=os.environ).stdout)
    same = 0
    for k, (ok, output, error) in enumerate(results, 1):
        line = f"cell {k:2d}: " + ("pass" if ok else f"FAIL {error.splitlines()[0][:150]}")
        if oracle is not None:
            agree = oracle[k - 1][1] == output
            same += agree
            line += ("   (output as JAX's)" if agree else
                     "   (output differs from JAX's)" if oracle[k - 1][0] else "   (JAX fails)")
        print(line)
        if args.show and output:
            print("    " + output.rstrip().replace("\n", "\n    "))
        if args.show and oracle is not None and oracle[k - 1][1] != output:
            print("    JAX: " + oracle[k - 1][1].rstrip().replace("\n", "\n    JAX: "))
        if args.show and oracle is not None and not oracle[k - 1][0]:
            print(f"    JAX fails: {oracle[k - 1][2][:600]}")
    passed = sum(ok for ok, _, _ in results)
    print(f"{args.tutorial.name}: {passed}/{len(results)} cells pass"
          + (f", {same} print what JAX prints" if oracle is not None else ""))


if __name__ == "__main__":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, str(ROOT))
    main()
