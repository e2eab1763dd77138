"""``equinox.internal``'s loops: ``while_loop`` (kinds lax, checkpointed, bounded; max_steps,
buffers) and ``scan`` (lax, checkpointed).

Each scenario is written once and run on invarax and on JAX + Equinox 0.13.8 (skipped when
absent): values, gradients, JVPs and vmaps agree within float32 rounding of ``sin`` (invarax's
is correctly rounded, XLA's is not). Within invarax the contract is bitwise: the checkpointed
and bounded loops give the same values and gradients (also under vmap and jit), which are the
gradients of the loop unrolled in Python; the lax and bounded JVPs agree; the checkpointed scan
is the lax scan, gradients included; vmap of a loop is the loop per example (N1).
"""

import types

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.module.internal as eqxi
import invarax.numpy as jnp

OURS = types.SimpleNamespace(jax=invarax, jnp=jnp, eqxi=eqxi)
KINDS = ["lax", "checkpointed", "bounded"]


@pytest.fixture(scope="module")
def theirs():
    pytest.importorskip("equinox.internal")
    import equinox.internal
    import jax

    return types.SimpleNamespace(jax=jax, jnp=jax.numpy, eqxi=equinox.internal)


def _loop(lib, kind, max_steps=20, checkpoints=None, base=16):
    """A loop with a data-dependent trip count, a closed-over weight and a buffer."""
    jnp = lib.jnp

    def f(x, w):
        def body(c):
            i, y, buf = c
            y = jnp.sin(y) * w + y * 1.5 + 0.1
            return i + 1, y, buf.at[i].set(y[0])

        i, y, buf = lib.eqxi.while_loop(
            lambda c: jnp.sum(c[1]) < 50.0, body, (0, x, jnp.zeros(max_steps)), kind=kind,
            max_steps=max_steps, buffers=lambda c: c[2], checkpoints=checkpoints, base=base)
        return jnp.sum(y ** 2) + jnp.sum(buf * jnp.arange(max_steps)), i

    return f


X = np.array([0.3, 0.7, 1.1], np.float32)
XS = np.stack([X * 0.5, X, X * 2.0])
W = np.float32(0.9)


def _scenarios(lib, kind, more=True):
    """The loop's value, steps, vmap, jit, JVP and gradient (``more``: also vmap's steps, the
    gradient under vmap and under jit, which cost JAX seconds to compile)."""
    f = _loop(lib, kind)
    value = lambda x, w: f(x, w)[0]  # noqa: E731
    out = {"value": value(X, W), "steps": f(X, W)[1],
           "vmap": lib.jax.vmap(value, in_axes=(0, None))(XS, W),
           "jit": lib.jax.jit(value)(X, W)}
    if kind != "checkpointed":
        out["jvp"] = lib.jax.jvp(value, (X, W), (X, W))[1]
    if kind != "lax":
        out["grad"] = lib.jax.grad(value, argnums=(0, 1))(X, W)
    if more:
        out["vmap_steps"] = lib.jax.vmap(lambda x: f(x, W)[1])(XS)
        if kind != "lax":
            out["vmap_grad"] = lib.jax.vmap(lib.jax.grad(value), in_axes=(0, None))(XS, W)
            out["jit_grad"] = lib.jax.jit(lib.jax.grad(value, argnums=1))(X, W)
    return out


def _close(ours, theirs):
    for a, b in zip(invarax.tree_util.tree_leaves(ours), _leaves(theirs), strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


def _leaves(tree):
    import jax

    return jax.tree_util.tree_leaves(tree)


@pytest.mark.parametrize("kind", KINDS)
def test_while_loop_as_equinox(theirs, kind):
    _close(_scenarios(OURS, kind, more=False), _scenarios(theirs, kind, more=False))


def test_kinds_agree_bitwise():
    lax_, ckpt, bounded = (_scenarios(OURS, k) for k in KINDS)
    for key in ("value", "steps", "vmap", "vmap_steps", "jit"):
        assert_bitwise(ckpt[key], bounded[key])
        assert_bitwise(lax_[key], bounded[key])
    assert_bitwise(lax_["jvp"], bounded["jvp"])
    for key in ("grad", "vmap_grad", "jit_grad"):
        for a, b in zip(invarax.tree_util.tree_leaves(ckpt[key]),
                        invarax.tree_util.tree_leaves(bounded[key]), strict=True):
            assert_bitwise(a, b)


def test_gradient_is_the_unrolled_gradient_bitwise():
    """The loop runs 4 steps here; unrolled in Python its gradient has the same bits."""
    def unrolled(x, w):
        buf = jnp.zeros(20)
        for i in range(int(_loop(OURS, "lax")(X, W)[1])):
            x = jnp.sin(x) * w + x * 1.5 + 0.1
            buf = buf.at[i].set(x[0])
        return jnp.sum(x ** 2) + jnp.sum(buf * jnp.arange(20))

    want = invarax.grad(unrolled, argnums=(0, 1))(X, W)
    for kind in ("checkpointed", "bounded"):
        for base in (3, 16):
            f = _loop(OURS, kind, base=base)
            got = invarax.grad(lambda x, w, f=f: f(x, w)[0], argnums=(0, 1))(X, W)
            assert_bitwise(got[0], want[0])
            assert_bitwise(got[1], want[1])


@pytest.mark.parametrize("kind", KINDS)
def test_vmap_is_the_loop_per_example_bitwise(kind):
    f = _loop(OURS, kind)
    batched = invarax.vmap(lambda x: f(x, W)[0])(XS)
    for i in range(len(XS)):
        assert_bitwise(batched[i], f(XS[i], W)[0])
    if kind != "lax":
        grads = invarax.vmap(invarax.grad(lambda x: f(x, W)[0]))(XS)
        for i in range(len(XS)):
            assert_bitwise(grads[i], invarax.grad(lambda x: f(x, W)[0])(XS[i]))


@pytest.mark.parametrize(("kind", "max_steps"), [("lax", 0), ("bounded", 0), *(
    (kind, n) for kind in KINDS for n in (1, 3))])
def test_max_steps_as_equinox(theirs, kind, max_steps):
    def run(lib):
        return lib.eqxi.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0),
                                   (0, 1.0), kind=kind, max_steps=max_steps)

    ours, want = run(OURS), run(theirs)
    for a, b in zip(invarax.tree_util.tree_leaves(ours), _leaves(want), strict=True):
        assert np.array_equal(a, b) and a.dtype == b.dtype and a.weak_type == b.weak_type


def test_checkpointed_without_max_steps(theirs):
    def g(lib, x):
        return lib.eqxi.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, lib.jnp.sin(c[1])),
                                   (0, x), kind="checkpointed", checkpoints=2)[1].sum()

    _close([g(OURS, X), invarax.grad(lambda x: g(OURS, x))(X)],
           [g(theirs, X), theirs.jax.grad(lambda x: g(theirs, x))(X)])


def test_buffer_writes_obey_pred(theirs):
    def run(lib):
        def body(c):
            i, buf = c
            return i + 1, buf.at[i].set(i * 10.0, pred=i % 2 == 0)

        return lib.eqxi.while_loop(lambda c: c[0] < 5, body, (0, lib.jnp.full(6, -1.0)),
                                   kind="bounded", max_steps=6, buffers=lambda c: c[1])[1]

    assert np.array_equal(run(OURS), run(theirs))
    assert np.array_equal(eqxi.buffer_at_set(jnp.zeros(2), 0, 1.0, pred=jnp.array(True)),
                          [1.0, 0.0])


def _steps_run(lib, checkpoints, max_steps, lengths):
    """For each trip count, the step numbers at which the checkpointed loop's body runs
    during ``jit(grad)``: the forward pass, then the backward pass's recomputations and
    reversals (the trip count is traced: one compilation)."""
    trail = []

    def loss(x, n):
        def body(c):
            lib.jax.debug.callback(lambda i: trail.append(int(i)), c[0])
            return c[0] + 1, lib.jnp.sin(c[1]) * 1.1

        return lib.eqxi.while_loop(lambda c: c[0] < n, body, (0, x), kind="checkpointed",
                                   max_steps=max_steps, checkpoints=checkpoints)[1]

    g, runs = lib.jax.jit(lib.jax.grad(loss)), []
    for n in lengths:
        trail.clear()
        lib.jax.block_until_ready(g(np.float32(0.5), np.int32(n)))
        if lib is not OURS:
            lib.jax.effects_barrier()
        runs.append(list(trail))
    return runs


@pytest.mark.parametrize(("checkpoints", "max_steps"),
                         [(1, None), (2, None), (3, None), (4, 12), (5, 5)])
def test_checkpointed_recomputes_the_steps_equinox_does(theirs, checkpoints, max_steps):
    """The same steps run forward and back, in the same order, as Equinox's online
    treeverse, up to lengths past (checkpoints + 1)(checkpoints + 2)/2 where its placement
    changes, and past ``max_steps``."""
    lengths = range(16)
    ours = _steps_run(OURS, checkpoints, max_steps, lengths)
    assert ours == _steps_run(theirs, checkpoints, max_steps, lengths)
    for n, trail in zip(lengths, ours, strict=True):
        n = min(n, max_steps or n)
        assert trail[:n] == list(range(n)) and len(trail) >= 2 * n  # each reversed once


def _scan_loss(lib, kind, checkpoints):
    jnp = lib.jnp

    def h(x):
        def step(c, z):
            c = jnp.cos(c) * z + c
            return c, c * z

        c, ys = lib.eqxi.scan(step, x, jnp.linspace(0.1, 1.0, 7), kind=kind,
                              checkpoints=checkpoints)
        return jnp.sum(c) + jnp.sum(ys ** 2)

    return h


@pytest.mark.parametrize("checkpoints", [None, 1, 3, "all"])
def test_checkpointed_scan_is_lax_scan_bitwise(checkpoints):
    ours = _scan_loss(OURS, "checkpointed", checkpoints)
    lax_ = _scan_loss(OURS, "lax", None)
    assert_bitwise(ours(X), lax_(X))
    assert_bitwise(invarax.grad(ours)(X), invarax.grad(lax_)(X))
    assert_bitwise(invarax.vmap(invarax.grad(ours))(XS), invarax.vmap(invarax.grad(lax_))(XS))


def test_checkpointed_scan_as_equinox(theirs):
    ours, want = _scan_loss(OURS, "checkpointed", 2), _scan_loss(theirs, "checkpointed", 2)
    _close([ours(X), invarax.grad(ours)(X)], [want(X), theirs.jax.grad(want)(X)])


def test_scan_with_buffers_in_the_carry():
    def f(x):
        def step(c, z):
            i, acc = c
            return (i + 1, acc.at[i].set(z * x)), z

        (_, acc), ys = eqxi.scan(step, (0, jnp.zeros(3)), jnp.arange(3.0), kind="checkpointed",
                                 buffers=lambda c: c[1])
        return jnp.sum(acc * acc) + jnp.sum(ys)

    assert float(f(2.0)) == 23.0
    assert float(invarax.grad(f)(2.0)) == 20.0


def test_errors():
    body = lambda c: c + 1  # noqa: E731
    with pytest.raises(ValueError, match="Unrecognised kind of while loop 'fast'"):
        eqxi.while_loop(lambda c: c < 3, body, 0, kind="fast")
    with pytest.raises(ValueError, match="kind='bounded' requires `max_steps`"):
        eqxi.while_loop(lambda c: c < 3, body, 0, kind="bounded")
    with pytest.raises(ValueError, match="Must specify either `max_steps` or `checkpoints`"):
        eqxi.while_loop(lambda c: c < 3, body, 0, kind="checkpointed")
    with pytest.raises(ValueError, match="`max_steps` must be a Python integer"):
        eqxi.while_loop(lambda c: c < 3, body, 0, kind="lax", max_steps=3.0)
    with pytest.raises(ValueError, match="same input and output structure"):
        eqxi.while_loop(lambda c: c < 3, lambda c: jnp.ones(2), 0.0, kind="lax")
    with pytest.raises(ValueError, match="Got inconsistent lengths in scan"):
        eqxi.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4, kind="checkpointed")
    with pytest.raises(ValueError, match="Must have at least one checkpoint"):  # as Equinox
        eqxi.while_loop(lambda c: c < 3, body, 0, kind="checkpointed", max_steps=0)
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        invarax.jvp(lambda x: eqxi.while_loop(lambda c: c < 3, lambda c: c * 2, x,
                                              kind="checkpointed", max_steps=4), (1.0,), (1.0,))


@pytest.mark.parametrize("kind", ["lax", "checkpointed", "bounded"])
def test_a_none_buffer_is_no_buffer_as_equinox(kind):
    # diffrax names its dense output's buffers, which are None without dense output
    eqx_internal = pytest.importorskip("equinox.internal")
    jax = pytest.importorskip("jax")
    for module, carry in ((eqxi, (0, None, jnp.zeros(3))),
                          (eqx_internal, (0, None, jax.numpy.zeros(3)))):
        out = module.while_loop(lambda c: c[0] < 3,
                                lambda c: (c[0] + 1, c[1], c[2].at[c[0]].set(1.0)), carry,
                                kind=kind, max_steps=4, buffers=lambda c: [c[1], c[2]])
        assert out[1] is None and int(out[0]) == 3 and np.asarray(out[2]).tolist() == [1, 1, 1]
