"""The bits of invarax's float32 elementary functions, for checking that a change to a kernel
changes none: a digest at each dispatch level, or an element-by-element comparison with
another build's kernel.

    python tools/f32_bits.py [--step S] [NAME ...]                 # digest per function and level
    python tools/f32_bits.py --against OLD/_native*.so [--step 1] [--isa avx512] [NAME ...]

The inputs are the float32 bit patterns 0, S, 2S, ... below 2^32 (S = 256 by default: 2^24
inputs spread over every binade, both signs, subnormals, inf and NaN; S = 1: all 2^32),
each through the kernel called directly on one thread (``_native.elementary``), at every
dispatch level this CPU has (``_native.set_isa``). The digest is the SHA-256 of the output
bits; the digests of one function must be equal across levels, and equal before and after a
change. ``--against`` calls the other build's kernel on the same inputs at the same level
and counts the outputs whose bits differ (an old build built in a scratch copy, e.g.
``git worktree add --detach /tmp/old HEAD~1`` and ``python setup.py -q build_ext
--inplace`` there). Default names: the eleven functions with float32 fast paths.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.elementary import _load_build  # noqa: E402
from invarax.kernels import _native  # noqa: E402
from invarax.kernels.elementary import _CODE  # noqa: E402

FAST = ("exp", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "exp2", "sinh",
        "cosh")
CHUNK = 1 << 24


def chunks(step: int):
    """The inputs, as float32 arrays of at most CHUNK elements."""
    for lo in range(0, 1 << 32, CHUNK * step):
        hi = min(1 << 32, lo + CHUNK * step)
        yield np.arange(lo, hi, step, dtype=np.uint64).astype(np.uint32).view(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--step", type=int, default=256)
    ap.add_argument("--against", metavar="SO")
    ap.add_argument("--isa", help="comma-separated dispatch levels (default: all of this CPU's)")
    ap.add_argument("names", nargs="*", default=list(FAST))
    args = ap.parse_args()
    other = _load_build(args.against) if args.against else None
    levels = args.isa.split(",") if args.isa else list(_native.isas())
    n = len(range(0, 1 << 32, args.step))
    print(f"{n} inputs (every {args.step}th float32 bit pattern), levels {', '.join(levels)}")
    top = _native.set_isa(levels[-1])
    bad = False
    try:
        for name in args.names:
            code, cells, start = _CODE[name], [], time.time()
            for isa in levels:
                _native.set_isa(isa)
                if other is not None:
                    other.set_isa(isa)
                digest, differ = hashlib.sha256(), 0
                for x in chunks(args.step):
                    y = np.empty_like(x)
                    _native.elementary(code, x, y)
                    digest.update(y.view(np.uint32).tobytes())
                    if other is not None:
                        z = np.empty_like(x)
                        other.elementary(code, x, z)
                        differ += int(np.count_nonzero(y.view(np.uint32) != z.view(np.uint32)))
                cells.append((isa, digest.hexdigest()[:16], differ))
            same = len({c[1] for c in cells}) == 1
            bad |= not same or any(c[2] for c in cells)
            text = ", ".join(f"{isa} {h}" + (f" ({d} differ)" if other is not None else "")
                             for isa, h, d in cells)
            print(f"{name}: {text}{'' if same else '  LEVELS DIFFER'} "
                  f"[{time.time() - start:.0f} s]", flush=True)
    finally:
        _native.set_isa(top)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
