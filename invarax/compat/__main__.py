"""``python -m invarax.compat script.py [args]``: run a program with the alias installed.

As ``python`` does: ``script.py`` runs as ``__main__`` with ``sys.argv`` its arguments and
its folder first on ``sys.path``; ``-m module`` runs a module (``python -m invarax.compat -m
pytest tests/``) and ``-c code`` a string.
"""

from __future__ import annotations

import os
import runpy
import sys

from ._alias import install

USAGE = """usage: python -m invarax.compat script.py [args ...]
       python -m invarax.compat -m module [args ...]
       python -m invarax.compat -c code [args ...]
Runs the program with jax, equinox and optax served by invarax."""


def main(argv: list[str]) -> int:
    """Run the program that ``argv`` names (``python``'s own command-line forms)."""
    if not argv or argv[0] in ("-h", "--help") or (argv[0] in ("-m", "-c") and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    install()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        sys.path[0] = ""
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
