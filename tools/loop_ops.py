"""Instructions per element of the float32 fast loops' main vector loop, at each dispatch
level, from the compiler's assembly: a machine-independent measure of their work, which can
be read for AVX-512 on a machine without it.

    python tools/loop_ops.py [--src elementary.c] [NAME ...]   # e.g. tanh_scan log_fast

It compiles a kernel source (default ``invarax/kernels/csrc/elementary.c``) to assembly with
setup.py's flags and ``-fkeep-static-functions`` (so each loop function is emitted on its
own, not only inlined into the dispatcher), takes each function named ``NAME_<level>``, and
in it the loop with the most vector instructions (those on xmm, ymm or zmm registers by
level; the scalar level's are SSE2's), counted per element; the elements per iteration
are the lanes of its float-to-double conversions (each element is converted once).
The time of a loop on one CPU follows these counts only roughly (latencies, ports and
dividers differ): benchmarks/elementary.py measures time.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "invarax" / "kernels" / "csrc"
LEVELS = {"scalar": "xmm", "avx2": "ymm", "avx512": "zmm"}
DEFAULT = ["ef512_exp_scan", "ef512_log_scan", "ef512_tanh_scan", "ef512_sin_scan",
           "ef512_cos_scan", "exp_scan", "log_scan", "tanh_scan", "expm1_scan", "sinh_scan",
           "cosh_scan", "logistic_scan", "log1p_scan", "sin_fast", "cos_fast", "exp2_fast"]


def setup_flags() -> list[str]:
    """setup.py's GCC flags (the list holding -ffp-contract=off), read from its source."""
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text())):
        if isinstance(node, ast.List) and any(
                isinstance(e, ast.Constant) and e.value == "-ffp-contract=off" for e in node.elts):
            return [e.value for e in node.elts]
    raise SystemExit("setup.py has no GCC flag list with -ffp-contract=off")


def assembly(src: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.s"
        subprocess.run(["gcc", *setup_flags(), "-fkeep-static-functions", "-I",
                        sysconfig.get_paths()["include"], "-I", str(CSRC), "-S", "-o",
                        str(out), str(src)], check=True)
        return out.read_text()


def main_loop(body: list[str], reg: str) -> list[str]:
    """The backward-jumping loop of the function with the most ``reg`` instructions."""
    labels = {line[:-1]: i for i, line in enumerate(body) if re.match(r"\.L\w+:$", line)}
    best: list[str] = []
    for i, line in enumerate(body):
        m = re.match(r"\tj\w+\s+(\.L\w+)$", line)
        if m and labels.get(m.group(1), i) < i:
            loop = [x for x in body[labels[m.group(1)]:i + 1] if re.match(r"\t[a-z]", x)]
            if sum(reg in x for x in loop) > sum(reg in x for x in best):
                best = loop
    return best


def elements(loop: list[str]) -> int:
    """Elements per iteration: the float-to-double conversions' lanes (the fast paths evaluate
    in double and convert each element once)."""
    lanes = {"%xmm": 2, "%ymm": 4, "%zmm": 8}
    n = 0
    for line in loop:
        if line.startswith("\tcvtss2sd") or line.startswith("\tvcvtss2sd"):
            n += 1
        elif line.startswith("\tvcvtps2pd") or line.startswith("\tcvtps2pd"):
            dest = line.rsplit(",", 1)[-1].strip()
            n += lanes[dest[:4]]
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(CSRC / "elementary.c"))
    ap.add_argument("names", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    asm = assembly(Path(args.src))
    print("| loop | " + " | ".join(f"{lv}: vector instructions / element (of all, per "
                                 "iteration)" for lv in LEVELS) + " |")
    print("|---|" + "---|" * len(LEVELS))
    for name in args.names:
        cells = []
        for level, reg in LEVELS.items():
            m = re.search(rf"\n{name}_{level}:\n(.*?)\n\t\.size", asm, re.S)
            if m is None and name.startswith("ef512_") and level == "avx512":
                m = re.search(rf"\n{name}:\n(.*?)\n\t\.size", asm, re.S)
            loop = main_loop(m.group(1).split("\n"), reg) if m else []
            n = elements(loop)
            vec = sum(reg in x for x in loop)
            cells.append(f"{vec / n:.2f} ({vec} of {len(loop)} per {n})" if n else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if not asm:
        sys.exit(1)


if __name__ == "__main__":
    main()
