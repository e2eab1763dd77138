"""Record JAX's draws for tests/test_compat_behaviour_random.py (run with JAX installed):

    python tests/scripts/jax_random_references.py

writes tests/data/jax_random_draws.npz: each sampler's draws from PRNGKey(0) (float32,
x64 off, the default partitionable threefry streams) and the gradients of gamma,
loggamma and beta that the test compares with invarax's.
"""

import pathlib
import sys

import jax
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from test_compat_behaviour_random import CASES, GRADIENTS  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "data" / "jax_random_draws.npz"


def main():
    key = jax.random.PRNGKey(0)
    arrays = {name: np.asarray(case[0](jax.random, key)) for name, case in CASES.items()}
    arrays.update({f"grad_{name}": np.asarray(fn(jax)) for name, fn in GRADIENTS.items()})
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
