"""The ``invarax`` command.

``invarax demo`` runs the main job (train an MLP, plot its loss, report reproducibility);
``invarax ir MODULE:FUNCTION --args 'f32[3]'`` prints the IR of a function;
``invarax verify`` checks that this machine gives the numerics contract's bits.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="invarax", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="train an MLP with Adam and report which results are bitwise reproducible")
    demo.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    demo.add_argument("--png", default=None,
                      help="where to write the loss curve (default invarax-demo-loss.png; "
                           "'' skips it)")
    demo.add_argument("--no-peers", dest="peers", action="store_false",
                      help="skip the JAX and PyTorch columns of the report")
    from . import _ir as ir
    from . import _verify

    ir.add_parser(commands)
    _verify.add_parser(commands)
    return parser


def _png_path(png: str | None) -> tuple[str, str | None]:
    """The loss curve's path and, when it cannot be written, why (checked before training).

    Without ``--png`` the default file is written when matplotlib is importable and
    skipped otherwise; an explicit ``--png`` needs matplotlib; ``--png ''`` skips the plot.
    """
    explicit = png is not None
    png = "invarax-demo-loss.png" if png is None else png
    if not png:
        return png, None
    skip = "--png '' skips the plot"
    if os.path.isdir(png):
        return png, (f"--png {png} is a directory: give a file name such as "
                     f"{os.path.join(png, 'loss.png')}, or {skip}")
    folder = os.path.dirname(os.path.abspath(png))
    if not os.path.isdir(folder):
        return png, (f"--png {png}: directory {folder} does not exist: create it "
                     f"(mkdir -p {folder}) or choose another path; {skip}")
    if not os.access(folder, os.W_OK):
        return png, (f"--png {png}: directory {folder} is not writable: choose another "
                     f"path; {skip}")
    if explicit and importlib.util.find_spec("matplotlib") is None:
        return png, (f"--png {png} needs matplotlib, which is not installed: pip install "
                     f"matplotlib (or the demo extra), or {skip}")
    return png, None


def main(argv=None) -> int:
    """Entry point of the ``invarax`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        if args.steps < 1:
            print("invarax demo: error: --steps must be at least 1", file=sys.stderr)
            return 2
        png, error = _png_path(args.png)
        if error:
            print(f"invarax demo: error: {error}", file=sys.stderr)
            return 2
        from ._demo import demo

        return demo(steps=args.steps, png=png, peers=args.peers)
    if args.command == "verify":
        from . import _verify

        return _verify.run(args, sys.stdout)
    from . import _ir as ir

    return ir.run(args, sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
