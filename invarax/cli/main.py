"""The ``invarax`` command.

``invarax demo`` runs the main job (train an MLP, plot its loss, report reproducibility);
``invarax ir MODULE:FUNCTION --args 'f32[3]'`` prints the IR of a function.
"""

from __future__ import annotations

import argparse
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="invarax", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="train an MLP with Adam and report which results are bitwise reproducible")
    demo.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    demo.add_argument("--png", default="invarax-demo-loss.png",
                      help="where to write the loss curve (default invarax-demo-loss.png)")
    demo.add_argument("--no-peers", dest="peers", action="store_false",
                      help="skip the JAX and PyTorch columns of the report")
    from . import ir

    ir.add_parser(commands)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``invarax`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        if args.steps < 1:
            print("invarax demo: error: --steps must be at least 1", file=sys.stderr)
            return 2
        from .demo import demo

        return demo(steps=args.steps, png=args.png, peers=args.peers)
    from . import ir

    return ir.run(args, sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
