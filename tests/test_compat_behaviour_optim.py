"""optax behaviours that real notebooks found different, and optax's names that invarax
serves, each checked against optax (skipped without it)."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax.numpy as jnp
from invarax import optim

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")


def _update(transform, updates, params=None):
    return transform.update(updates, transform.init(params if params is not None else updates),
                            params)[0]


@pytest.mark.parametrize("grads", [[3.0, -4.0], [0.0, 0.0], [1e-30, 0.0]])
@pytest.mark.parametrize("max_norm", [0.0, 1.0, 10.0])
def test_clip_by_global_norm_zero_and_positive_as_optax(max_norm, grads):
    # max_norm=0.0 raised; optax zeroes the updates (NaN where all are zero)
    ours = _update(optim.clip_by_global_norm(max_norm), {"a": jnp.array(grads)})
    theirs = _update(optax.clip_by_global_norm(max_norm), {"a": jax.numpy.array(grads)})
    assert_bitwise(ours["a"], np.asarray(theirs["a"]))
