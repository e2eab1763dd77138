"""invarax.optim's losses and tree utilities: against optax (skipped without it), jit and
vmap bitwise (values and gradients), errors."""

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import optim
from invarax.tree_util import tree_leaves

RTOL, ATOL = 2e-6, 1e-6


def _data(seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((5, 4)).astype(np.float32) * 3
    probs = rng.random((5, 4)).astype(np.float32)
    probs /= probs.sum(-1, keepdims=True)
    return {
        "x": logits,
        "y": rng.standard_normal((5, 4)).astype(np.float32),
        "probs": probs,
        "labels": rng.integers(0, 4, 5).astype(np.int32),
        "binary": (rng.random((5, 4)) < 0.5).astype(np.float32),
        "signs": np.where(rng.random((5, 4)) < 0.5, -1.0, 1.0).astype(np.float32),
        "mask": rng.random((5, 4)) < 0.7,
    }


# name -> (function of (module, d), whose arguments are the arrays in d)
LOSSES = {
    "l2_loss": lambda m, d: m.l2_loss(d["x"], d["y"]),
    "l2_loss_no_targets": lambda m, d: m.l2_loss(d["x"]),
    "squared_error": lambda m, d: m.squared_error(d["x"], d["y"]),
    "huber_loss": lambda m, d: m.huber_loss(d["x"], d["y"], delta=1.5),
    "log_cosh": lambda m, d: m.log_cosh(d["x"], d["y"]),
    "cosine_similarity": lambda m, d: m.cosine_similarity(d["x"], d["y"], epsilon=1e-3),
    "cosine_distance": lambda m, d: m.cosine_distance(d["x"], d["y"], axis=0),
    "smooth_labels": lambda m, d: m.smooth_labels(d["probs"], 0.1),
    "sigmoid_bce": lambda m, d: m.sigmoid_binary_cross_entropy(d["x"], d["binary"]),
    "sigmoid_focal": lambda m, d: m.sigmoid_focal_loss(d["x"], d["probs"], alpha=0.25),
    "sigmoid_focal_gamma": lambda m, d: m.sigmoid_focal_loss(d["x"], d["binary"], gamma=1.5),
    "hinge_loss": lambda m, d: m.hinge_loss(d["x"], d["signs"]),
    "perceptron_loss": lambda m, d: m.perceptron_loss(d["x"], d["signs"]),
    "softmax_ce": lambda m, d: m.softmax_cross_entropy(d["x"], d["probs"]),
    "softmax_ce_axis0": lambda m, d: m.softmax_cross_entropy(d["x"], d["probs"], axis=0),
    "softmax_ce_where": lambda m, d: m.softmax_cross_entropy(d["x"], d["probs"],
                                                             where=d["mask"]),
    "safe_softmax_ce": lambda m, d: m.safe_softmax_cross_entropy(d["x"], d["probs"]),
    "softmax_ce_int": lambda m, d: m.softmax_cross_entropy_with_integer_labels(
        d["x"], d["labels"]),
    "softmax_ce_int_axis0": lambda m, d: m.softmax_cross_entropy_with_integer_labels(
        d["x"].T, d["labels"], axis=0),
    "softmax_ce_int_where": lambda m, d: m.softmax_cross_entropy_with_integer_labels(
        d["x"], d["labels"], where=d["mask"]),
    "multiclass_hinge": lambda m, d: m.multiclass_hinge_loss(d["x"], d["labels"]),
    "multiclass_perceptron": lambda m, d: m.multiclass_perceptron_loss(d["x"], d["labels"]),
    "poly_loss": lambda m, d: m.poly_loss_cross_entropy(d["x"], d["probs"], epsilon=1.5),
    "kl_divergence": lambda m, d: m.kl_divergence(d["y"] - 2.0, d["probs"]),
    "kl_log_targets": lambda m, d: m.kl_divergence_with_log_targets(d["y"] - 2.0,
                                                                    d["x"] - 3.0),
    "ntxent": lambda m, d: m.ntxent(d["x"], d["labels"], temperature=0.5),
    "sparsemax": lambda m, d: m.sparsemax_loss(d["x"] / 3, d["binary"].astype(np.int32)),
    "multiclass_sparsemax": lambda m, d: m.multiclass_sparsemax_loss(d["x"] / 3, d["labels"]),
    "generalized_kl": lambda m, d: m.generalized_kl_divergence(d["y"] - 2.0, d["probs"]),
}


def _as(lib_numpy, d):
    return {k: lib_numpy.asarray(v) for k, v in d.items()}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_optax(name):
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    d = _data()
    ours = np.asarray(LOSSES[name](optim.losses, _as(jnp, d)))
    # one compiled program (eagerly JAX compiles each operation on its own), d its argument
    theirs = np.asarray(jax.jit(lambda d: LOSSES[name](optax.losses, d))(_as(jax.numpy, d)))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_and_its_gradient_are_bitwise_under_jit(name):
    d = _as(jnp, _data())
    x = d.pop("x")

    def loss(x, d):
        return jnp.sum(LOSSES[name](optim.losses, {**d, "x": x}))

    for f in (loss, invarax.grad(loss)):
        assert_bitwise(invarax.jit(f)(x, d), f(x, d))


@pytest.mark.parametrize("name", ["softmax_ce_int", "sigmoid_focal", "huber_loss", "poly_loss"])
@pytest.mark.parametrize("batch", [1, 3, 5])
def test_loss_under_vmap_is_bitwise_each_row(name, batch):
    d = _as(jnp, _data())

    def per_row(row):
        return LOSSES[name](optim.losses, row)

    rows = {k: v[:batch] for k, v in d.items() if k != "x"} | {"x": d["x"][:batch]}
    batched = invarax.vmap(lambda r: per_row({k: v[None] for k, v in r.items()}))(rows)
    for i in range(batch):
        assert_bitwise(batched[i], per_row({k: v[i:i + 1] for k, v in rows.items()}))


def test_top_level_losses_are_optax_top_level_losses():
    optax = pytest.importorskip("optax")
    top = {n for n in dir(optax) if callable(getattr(optax, n)) and n in optim.losses.__all__}
    assert top and all(getattr(optim, n) is getattr(optim.losses, n) for n in top)


def test_loss_errors_name_the_argument_and_the_fix():
    with pytest.raises(TypeError, match="l2_loss: predictions must have a floating dtype, got "
                                        "int32"):
        optim.l2_loss(jnp.arange(3))
    with pytest.raises(ValueError, match=r"squared_error: predictions and targets must have one "
                                         r"shape, got \(3,\) and \(1,\)"):
        optim.squared_error(jnp.ones(3), jnp.ones(1))
    with pytest.raises(TypeError, match="softmax_cross_entropy_with_integer_labels: labels must "
                                        "have an integer dtype, got float32"):
        optim.softmax_cross_entropy_with_integer_labels(jnp.ones((2, 3)), jnp.ones(2))
    with pytest.raises(ValueError, match=r"labels must have the logits' shape \(2, 3\) without "
                                         r"axis 1, i.e. \(2,\); got \(3,\)"):
        optim.softmax_cross_entropy_with_integer_labels(jnp.ones((2, 3)),
                                                        jnp.zeros(3, jnp.int32))


# ---------------------------------------------------------------------------------------
# Tree utilities.

def _trees(seed=0):
    rng = np.random.default_rng(seed)
    return [{"a": rng.standard_normal((2, 3)).astype(np.float32),
             "b": [rng.standard_normal(4).astype(np.float32), np.float32(rng.random())]}
            for _ in range(3)]


TREE_FUNCTIONS = {
    "add": lambda t, x, y, z: t.add(x, y, z),
    "sub": lambda t, x, y, z: t.sub(x, y),
    "mul": lambda t, x, y, z: t.mul(x, y),
    "div": lambda t, x, y, z: t.div(x, y),
    "scale": lambda t, x, y, z: t.scale(0.5, x),
    "add_scale": lambda t, x, y, z: t.add_scale(x, 0.5, y),
    "vdot": lambda t, x, y, z: t.vdot(x, y),
    "sum": lambda t, x, y, z: t.sum(x),
    "max": lambda t, x, y, z: t.max(x),
    "min": lambda t, x, y, z: t.min(x),
    "norm": lambda t, x, y, z: t.norm(x),
    "norm_squared": lambda t, x, y, z: t.norm(x, squared=True),
    "norm_1": lambda t, x, y, z: t.norm(x, ord=1),
    "norm_inf": lambda t, x, y, z: t.norm(x, ord="inf"),
    "zeros_like": lambda t, x, y, z: t.zeros_like(x),
    "ones_like": lambda t, x, y, z: t.ones_like(x, dtype=np.float16),
    "full_like": lambda t, x, y, z: t.full_like(x, 0.3),
    "clip": lambda t, x, y, z: t.clip(x, -0.5, 0.5),
    "where": lambda t, x, y, z: t.where(True, x, y),
    "update_moment": lambda t, x, y, z: t.update_moment(x, y, 0.9, 2),
    "update_moment_per_elem_norm": lambda t, x, y, z: t.update_moment_per_elem_norm(x, y, 0.9,
                                                                                    2),
    "update_infinity_moment": lambda t, x, y, z: t.update_infinity_moment(x, y, 0.9, 1e-3),
    "bias_correction": lambda t, x, y, z: t.bias_correction(x, 0.9, 3),
    "cast": lambda t, x, y, z: t.cast(x, np.float16),
    "cast_like": lambda t, x, y, z: t.cast_like(x, t.cast(y, np.float16)),
    "batch_shape": lambda t, x, y, z: t.batch_shape(x, (2,)),
    "allclose": lambda t, x, y, z: t.allclose(x, t.add_scale(x, 1e-7, y)),
    "not_allclose": lambda t, x, y, z: t.allclose(x, y),
}


@pytest.mark.parametrize("name", sorted(TREE_FUNCTIONS))
def test_tree_utility_matches_optax(name):
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    trees = _trees()
    ours = TREE_FUNCTIONS[name](optim.tree, *[jax_free(t, jnp) for t in trees])
    theirs = jax.jit(lambda *trees: TREE_FUNCTIONS[name](optax.tree, *trees))(
        *[jax_free(t, jax.numpy) for t in trees])  # one program, not one per operation
    ours_leaves, theirs_leaves = tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def jax_free(tree, lib_numpy):
    return {"a": lib_numpy.asarray(tree["a"]),
            "b": [lib_numpy.asarray(tree["b"][0]), lib_numpy.asarray(tree["b"][1])]}


def test_tree_utils_names_are_optax_names():
    optax = pytest.importorskip("optax")
    assert set(optax.tree.__all__ if hasattr(optax.tree, "__all__") else
               [n for n in dir(optax.tree) if not n.startswith("_")]) - set(optim.tree.__all__) \
        <= {"get", "set", "get_all_with_path", "map_params", "random_like", "split_key_like",
            "unwrap_random_key_data"}
    assert optim.tree_utils.tree_l2_norm is not None
    assert set(n for n in dir(optax.tree_utils) if n.startswith("tree_")) - \
        set(optim.tree_utils.__all__) <= {
            "tree_get", "tree_set", "tree_get_all_with_path", "tree_map_params",
            "tree_random_like", "tree_split_key_like", "tree_unwrap_random_key_data"}


def test_tree_vdot_and_norm_are_bitwise_under_jit():
    x, y, _ = [jax_free(t, jnp) for t in _trees()]
    for f in (optim.tree.vdot, lambda a, b: optim.tree.norm(a)):
        assert_bitwise(invarax.jit(f)(x, y), f(x, y))


def _ctc_data(seed=7):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((3, 7, 5)).astype(np.float32)
    logit_paddings = np.zeros((3, 7), np.float32)
    logit_paddings[1, 5:] = 1.0
    labels = np.array([[1, 2, 2, 3], [4, 4, 1, 0], [2, 3, 1, 1]], np.int32)
    label_paddings = np.zeros((3, 4), np.float32)
    label_paddings[1, 3:] = 1.0
    label_paddings[2, 2:] = 1.0
    return logits, logit_paddings, labels, label_paddings


def test_ctc_loss_and_forward_probs_match_optax():
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    args = _ctc_data()
    ours = optim.losses.ctc_loss_with_forward_probs(*map(jnp.asarray, args), blank_id=0)
    # compiled: eagerly JAX compiles each operation, and its scan afresh at each call
    theirs = jax.jit(optax.losses.ctc_loss_with_forward_probs)(*map(jax.numpy.asarray, args))
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(optim.ctc_loss(*map(jnp.asarray, args), blank_id=2)),
                               np.asarray(jax.jit(lambda *a: optax.ctc_loss(*a, blank_id=2))(
                                   *map(jax.numpy.asarray, args))), rtol=1e-5)


def test_ctc_loss_and_its_gradient_are_bitwise_under_jit():
    logits, *rest = map(jnp.asarray, _ctc_data())

    def loss(logits, *rest):
        return jnp.sum(optim.ctc_loss(logits, *rest))

    for f in (loss, invarax.grad(loss)):
        assert_bitwise(invarax.jit(f)(logits, *rest), f(logits, *rest))


def test_ctc_loss_names_a_bad_shape():
    logits, logit_paddings, labels, label_paddings = map(jnp.asarray, _ctc_data())
    with pytest.raises(ValueError, match=r"ctc_loss: label_paddings must have the labels' shape "
                                         r"\(3, 4\), got \(3, 3\)"):
        optim.ctc_loss(logits, logit_paddings, labels, label_paddings[:, :3])


@pytest.mark.parametrize("make", [
    lambda o: o.adam(0.1),
    lambda o: o.chain(o.clip(1.0), o.adamw(0.1, mask={"a": True, "b": False})),
    lambda o: o.partition({"x": o.sgd(0.1, 0.9), "y": o.lion(0.1)}, {"a": "x", "b": "y"}),
    lambda o: o.inject_hyperparams(o.rmsprop)(0.1, centered=True),
])
def test_tree_map_params_matches_optax(make):
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")

    def run(lib, npl):
        params = {"a": npl.ones((2, 3)), "b": [npl.ones(4), npl.ones(())]}
        opt = make(lib)
        state = opt.init(params)
        if "partition" in repr(make.__code__.co_names):  # masked parts: no params alongside
            return lib.tree_utils.tree_map_params(opt, lambda p: p + 2.0, state)
        return lib.tree_utils.tree_map_params(opt, lambda p, r: p + 2.0 * r, state, params,
                                              transform_non_params=lambda v: v)

    ours, theirs = run(optim, jnp), run(optax, jax.numpy)
    ours_leaves, theirs_leaves = tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
