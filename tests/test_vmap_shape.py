"""vmap of the shape, indexing and sort primitives, through their jnp and lax entry points.

Each case checks N1 bitwise: ``vmap(f, in_axes, out_axes)(*xs)`` is exactly the stack of
``f`` applied to each example, for in_axes 0, 1, -1 and None mixes, out_axes 0 and 1,
batch sizes 1, 2 and 7, two levels of vmap, vmap of jit and jit of vmap. The jaxpr of
``vmap(f)`` has no per-example loop: its size does not depend on the batch size.
"""

import collections
from dataclasses import dataclass

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.transforms._vmap import vmap


@dataclass(frozen=True)
class Arg:
    """One argument of a case: its per-example shape and how its values are drawn."""

    shape: tuple
    kind: str = "f"  # "f": normal floats, "i": ints in [lo, hi), "t": ties, NaNs and -0.0
    lo: int = 0
    hi: int = 0

    def draw(self, shape, rng):
        if self.kind == "i":
            return rng.integers(self.lo, self.hi, shape).astype(np.int32)
        if self.kind == "t":
            choices = np.float32([0.0, -0.0, 1.0, -1.0, np.nan, 2.0])
            return rng.choice(choices, shape)
        return rng.standard_normal(shape).astype(np.float32)


def F(*shape):
    return Arg(shape)


def I(lo, hi, *shape):  # noqa: E743
    return Arg(shape, "i", lo, hi)


def T(*shape):
    return Arg(shape, "t")


C = np.arange(6, dtype=np.float32).reshape(3, 2)  # a constant that functions close over


def scatter_mode(mode):
    return lambda x, i, u: lax.scatter_add(x, i, u, axes=(0,), mode=mode)


CASES = {
    # shape
    "reshape": (lambda x: x.reshape(5, 4), [F(4, 5)]),
    "reshape_flat": (lambda x: jnp.reshape(x, -1), [F(2, 3, 2)]),
    "transpose": (lambda x: x.T, [F(3, 4)]),
    "transpose_3d": (lambda x: jnp.transpose(x, (2, 0, 1)), [F(2, 3, 4)]),
    "moveaxis": (lambda x: jnp.moveaxis(x, 0, -1), [F(2, 3, 4)]),
    "expand_dims": (lambda x: jnp.expand_dims(x, (0, 2)), [F(3, 4)]),
    "squeeze": (lambda x: jnp.squeeze(x), [F(1, 4, 1)]),
    "squeeze_axis": (lambda x: jnp.squeeze(x, 2), [F(3, 4, 1)]),
    "flip": (lambda x: jnp.flip(x, 1), [F(3, 4)]),
    "flip_all": (lambda x: jnp.flip(x), [F(3, 4)]),
    "broadcast_to": (lambda x: jnp.broadcast_to(x, (2, 3, 4)), [F(3, 1)]),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4, 5), (1, 3)), [F(3, 1)]),
    "broadcast_scalar": (lambda x: jnp.broadcast_to(x, (2, 3)), [F()]),
    "concatenate": (lambda x, y: jnp.concatenate([x, y, x], axis=1), [F(3, 4), F(3, 2)]),
    "concatenate_const": (lambda x: jnp.concatenate([C, x], axis=0), [F(4, 2)]),
    "stack": (lambda x, y: jnp.stack([x, y], axis=1), [F(3, 4), F(3, 4)]),
    "stack_last": (lambda x, y, z: jnp.stack([x, y, z], -1), [F(4), F(4), F(4)]),
    "pad_constant": (lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=7.0), [F(3, 4)]),
    "pad_traced_value": (lambda x, v: jnp.pad(x, ((2, 0), (1, 1)), constant_values=v),
                         [F(3, 4), F()]),
    "lax_pad": (lambda x, v: lax.pad(x, v, [(1, -1, 2), (-2, 1, 1)]), [F(3, 4), F()]),
    "pad_edge": (lambda x: jnp.pad(x, ((1, 2), (3, 0)), mode="edge"), [F(3, 4)]),
    "pad_reflect": (lambda x: jnp.pad(x, ((2, 1), (1, 3)), mode="reflect"), [F(3, 4)]),
    "pad_wrap": (lambda x: jnp.pad(x, 2, mode="wrap"), [F(3, 4)]),
    "slice": (lambda x: x[1:3], [F(4, 5)]),
    "slice_steps": (lambda x: x[::2, 4:0:-3], [F(4, 5)]),
    "slice_negative_step": (lambda x: x[::-2], [F(5, 3)]),
    "slice_none_ellipsis": (lambda x: x[None, ..., 1], [F(2, 3, 4)]),
    "slice_ellipsis_none": (lambda x: x[..., ::2, None], [F(2, 3, 4)]),
    "int_index": (lambda x: x[-1, 2], [F(3, 4)]),
    "lax_slice": (lambda x: lax.slice(x, (0, 1), (3, 5), (2, 3)), [F(3, 5)]),
    "lax_rev": (lambda x: lax.rev(x, (0, 2)), [F(2, 3, 4)]),
    "tile": (lambda x: jnp.tile(x, (2, 1, 3)), [F(3, 2)]),
    "repeat": (lambda x: jnp.repeat(x, 2, axis=0), [F(3, 2)]),
    "repeat_flat": (lambda x: jnp.repeat(x, 3), [F(2, 2)]),
    "roll": (lambda x: jnp.roll(x, 2, axis=1), [F(3, 5)]),
    "roll_flat": (lambda x: jnp.roll(x, -3), [F(3, 5)]),
    "roll_traced": (lambda x, s: jnp.roll(x, s, axis=1), [F(3, 5), I(-7, 7)]),
    # indexing
    "getitem_array": (lambda x, i: x[i], [F(5, 4), I(-5, 5, 3)]),
    "getitem_array_2d": (lambda x, i: x[i], [F(5, 4), I(-6, 6, 2, 3)]),
    "getitem_second_axis": (lambda x, i: x[:, i], [F(3, 5), I(0, 5, 4)]),
    "getitem_two_arrays": (lambda x, i, j: x[i, j], [F(5, 4), I(0, 5, 3), I(0, 4, 3)]),
    "getitem_separated": (lambda x, i, j: x[i, :, j], [F(3, 2, 4), I(0, 3, 2), I(0, 4, 2)]),
    "getitem_traced_int": (lambda x, s: x[s], [F(5, 3), I(-5, 5)]),
    "getitem_fill": (lambda x, i: x.at[i].get(mode="fill", fill_value=-9.0),
                     [F(5, 2), I(-7, 7, 4)]),
    "take": (lambda x, i: jnp.take(x, i, axis=1), [F(3, 5), I(-7, 7, 4)]),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                        [F(3, 4), I(0, 4, 3, 6)]),
    "take_along_axis_0": (lambda x, i: jnp.take_along_axis(x, i, axis=0),
                          [F(3, 4), I(0, 3, 5, 4)]),
    "lax_gather_fill": (lambda x, i: lax.gather(x, i, axes=(1,), mode="fill", fill_value=-1.0),
                        [F(3, 4), I(-2, 6, 5, 1)]),
    "lax_gather_two_axes": (lambda x, i: lax.gather(x, i, axes=(2, 0), mode="clip"),
                            [F(3, 2, 4), I(-1, 5, 3, 2)]),
    "at_set": (lambda x, i, u: x.at[i].set(u), [F(5, 3), I(0, 5, 6), F(6, 3)]),
    "at_set_scalar": (lambda x, i: x.at[i].set(2.0), [F(5, 3), I(-5, 5, 4)]),
    "at_add": (lambda x, i, u: x.at[i].add(u), [F(5, 3), I(0, 5, 6), F(6, 3)]),
    "at_add_second_axis": (lambda x, i, u: x.at[:, i].add(u), [F(3, 5), I(0, 5, 6), F(3, 6)]),
    "at_add_dropped": (lambda x, i, u: x.at[i].add(u, mode="drop"),
                       [F(4,), I(-6, 6, 8), F(8,)]),
    "at_min": (lambda x, i, u: x.at[i].min(u), [F(5, 3), I(0, 5, 6), F(6, 3)]),
    "at_max": (lambda x, i, u: x.at[i].max(u), [F(5, 3), I(0, 5, 6), F(6, 3)]),
    "at_multiply": (lambda x, i, u: x.at[i].multiply(u), [F(5, 3), I(0, 5, 6), F(6, 3)]),
    "at_set_two_arrays": (lambda x, i, j, u: x.at[i, j].set(u),
                          [F(4, 3), I(0, 4, 5), I(0, 3, 5), F(5)]),
    "lax_scatter_clip": (scatter_mode("clip"), [F(4, 2), I(-3, 7, 6, 1), F(6, 2)]),
    "lax_scatter_drop": (scatter_mode("drop"), [F(4, 2), I(-3, 7, 6, 1), F(6, 2)]),
    "dynamic_slice": (lambda x, s: lax.dynamic_slice(x, (s, 1), (2, 3)), [F(5, 4), I(-6, 6)]),
    "dynamic_slice_two_starts": (lambda x, s, t: lax.dynamic_slice(x, (s, t), (2, 3)),
                                 [F(5, 4), I(-6, 6), I(-1, 5)]),
    "dynamic_slice_whole_axis": (lambda x, s, t: lax.dynamic_slice(x, (s, t), (5, 2)),
                                 [F(5, 4), I(-6, 6), I(-1, 5)]),
    "dynamic_slice_everything": (lambda x, s: lax.dynamic_slice(x, (s, 0), (5, 4)),
                                 [F(5, 4), I(-6, 6)]),
    "dynamic_slice_3d": (lambda x, s: lax.dynamic_slice(x, (0, s, s), (2, 2, 3)),
                         [F(2, 4, 5), I(0, 4)]),
    "dynamic_update_slice": (lambda x, u, s: lax.dynamic_update_slice(x, u, (1, s)),
                             [F(4, 5), F(2, 3), I(-6, 6)]),
    "dynamic_update_slice_two_starts": (
        lambda x, u, s, t: lax.dynamic_update_slice(x, u, (s, t)),
        [F(4, 5), F(2, 3), I(-6, 6), I(0, 5)]),
    "dynamic_update_slice_whole_axis": (
        lambda x, u, s, t: lax.dynamic_update_slice(x, u, (s, t)),
        [F(4, 5), F(4, 2), I(-6, 6), I(0, 5)]),
    # sorting
    "sort": (lambda x: jnp.sort(x), [T(3, 6)]),
    "sort_axis0": (lambda x: jnp.sort(x, axis=0), [T(6, 3)]),
    "argsort": (lambda x: jnp.argsort(x, axis=1), [T(3, 6)]),
    "argsort_axis0": (lambda x: jnp.argsort(x, axis=0), [T(6, 3)]),
    "lax_sort_keys": (lambda k, v: lax.sort((k, v), dimension=0, num_keys=1),
                      [T(6, 2), F(6, 2)]),
    "lax_sort_two_keys": (lambda k1, k2, v: lax.sort((k1, k2, v), num_keys=2),
                          [T(2, 6), T(2, 6), F(2, 6)]),
}


def in_axes_patterns(args):
    """in_axes tuples: all 0, all 1 (0 for scalars), all -1, and each argument unbatched
    in turn, the others alternating 0 and -1, or -1 and 1."""
    one = [1 if a.shape else 0 for a in args]
    patterns = {"0": (0,) * len(args), "1": tuple(one), "-1": (-1,) * len(args)}
    if len(args) > 1:
        for k in range(len(args)):
            for name, cycle in (("", (0, -1)), ("b", (-1, 1))):
                others = iter(cycle * len(args))
                axes = [next(others) for _ in args]
                axes = [min(a, o) for a, o in zip(axes, one, strict=True)]
                axes[k] = None
                patterns[f"none{k}{name}"] = tuple(axes)
    return patterns


def with_batch(args, axes, sizes, seed=0):
    """Data for ``args``: each batched with ``sizes[l]`` examples at ``axes[l][j]`` for each
    level l (inner first), or unbatched at a level where that axis is None."""
    rng = np.random.default_rng(seed)
    out = []
    for j, arg in enumerate(args):
        shape = list(arg.shape)
        for level, size in zip(axes, sizes, strict=True):
            axis = level[j]
            if axis is not None:
                shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, size)
        out.append(arg.draw(tuple(shape), rng))
    return out


def leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def one_by_one(f, xs, in_axes, size, out_axis=0):
    """``f`` applied to each example in turn, the results stacked at ``out_axis``."""
    results = []
    for i in range(size):
        example = [x if a is None else np.take(x, i, axis=a) for x, a in zip(xs, in_axes,
                                                                               strict=True)]
        results.append(leaves(f(*[jnp.asarray(x) for x in example])))
    return [np.stack(r, axis=out_axis) for r in zip(*results, strict=True)]


def assert_leaves_bitwise(out, expected):
    got = leaves(out)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert_bitwise(g, e)


@pytest.mark.parametrize("name", CASES)
def test_vmap_is_bitwise_per_example(name):
    f, args = CASES[name]
    for pattern, in_axes in in_axes_patterns(args).items():
        for size in (1, 2, 7):
            xs = with_batch(args, [in_axes], [size], seed=size)
            expected = one_by_one(f, xs, in_axes, size)
            try:
                assert_leaves_bitwise(vmap(f, in_axes=in_axes)(*xs), expected)
            except AssertionError as err:
                raise AssertionError(f"in_axes={pattern}, batch size {size}: {err}") from None


@pytest.mark.parametrize("name", CASES)
def test_vmap_out_axes_1(name):
    f, args = CASES[name]
    in_axes = in_axes_patterns(args)["1"]
    xs = with_batch(args, [in_axes], [2])
    example = leaves(f(*[jnp.asarray(x) for x in with_batch(args, [], [])]))
    out_axis = min(1, *(e.ndim for e in example))  # 0 for a scalar output
    out = vmap(f, in_axes=in_axes, out_axes=out_axis)(*xs)
    assert_leaves_bitwise(out, one_by_one(f, xs, in_axes, 2, out_axis=out_axis))


def last_pattern(args):
    """The last in_axes pattern: one argument unbatched where there are several."""
    return list(in_axes_patterns(args).values())[-1]


@pytest.mark.parametrize("name", CASES)
def test_jit_of_vmap_and_vmap_of_jit(name):
    f, args = CASES[name]
    in_axes = last_pattern(args)
    xs = with_batch(args, [in_axes], [7])
    expected = one_by_one(f, xs, in_axes, 7)
    assert_leaves_bitwise(invarax.jit(vmap(f, in_axes=in_axes))(*xs), expected)
    assert_leaves_bitwise(vmap(invarax.jit(f), in_axes=in_axes)(*xs), expected)


@pytest.mark.parametrize("name", CASES)
def test_nested_vmap(name):
    f, args = CASES[name]
    patterns = list(in_axes_patterns(args).values())
    inner, outer = patterns[-1], patterns[2]  # e.g. (None, 0, -1) inside, -1 outside
    xs = with_batch(args, [inner, outer], [3, 2])
    out = vmap(vmap(f, in_axes=inner), in_axes=outer, out_axes=1)(*xs)
    expected = []
    for i in range(2):
        example = [x if a is None else np.take(x, i, axis=a) for x, a in zip(xs, outer,
                                                                               strict=True)]
        expected.append(one_by_one(f, example, inner, 3))
    expected = [np.stack(e, axis=1) for e in zip(*expected, strict=True)]
    assert_leaves_bitwise(out, expected)


def primitives(f, *args):
    return collections.Counter(e.primitive.name for e in invarax.make_jaxpr(f)(*args).eqns)


@pytest.mark.parametrize("name", CASES)
def test_vmap_has_no_per_example_loop(name):
    """The batched program does not grow with the batch size, and is at most a few
    index-building equations larger than the unbatched one."""
    f, args = CASES[name]
    in_axes = last_pattern(args)
    example = [jnp.asarray(x) for x in with_batch(args, [], [])]
    sizes = []
    for size in (2, 7):
        batched = primitives(vmap(f, in_axes=in_axes), *with_batch(args, [in_axes], [size]))
        sizes.append(batched.total())
    assert sizes[0] == sizes[1]
    assert sizes[0] <= primitives(f, *example).total() + 24


def test_jaxpr_of_vmap_shape_ops_keeps_the_primitives():
    f = lambda x: jnp.flip(x.T, 0)[1:, None].reshape(-1)  # noqa: E731
    x = np.zeros((3, 4), np.float32)
    assert primitives(vmap(f), np.zeros((5, 3, 4), np.float32)) == primitives(f, x)
    assert primitives(vmap(f, in_axes=1), np.zeros((3, 5, 4), np.float32)) == (
        primitives(f, x) + collections.Counter(["transpose"]))


def test_jaxpr_of_vmap_gather_and_scatter():
    x, i, u = np.zeros((5, 3), np.float32), np.zeros(4, np.int32), np.zeros((4, 3), np.float32)
    get = lambda x, i: x[i]  # noqa: E731
    add = lambda x, i, u: x.at[i].add(u)  # noqa: E731
    xs, iss, us = (np.stack([a] * 7) for a in (x, i, u))
    # A batched operand alone: the batch axis is one more axis read (or written) whole,
    # after the index batch dims; out_axes=1 (updates batched at 1) needs no transpose.
    move = collections.Counter(["transpose"])
    assert primitives(vmap(get, (0, None), out_axes=1), xs, i) == primitives(get, x, i)
    assert primitives(vmap(get, (0, None)), xs, i) == primitives(get, x, i) + move
    assert primitives(vmap(add, (0, None, 1)), xs, i, np.swapaxes(us, 0, 1)) == (
        primitives(add, x, i, u))
    assert primitives(vmap(add, (0, None, 0)), xs, i, us) == primitives(add, x, i, u) + move
    # Batched indices too: an iota column for the operand's batch axis.
    column = collections.Counter(["iota", "concatenate"])
    assert primitives(vmap(get), xs, iss) == primitives(get, x, i) + column
    assert primitives(vmap(add), xs, iss, us) == primitives(add, x, i, u) + column


def test_jaxpr_of_vmap_dynamic_slice_with_batched_starts_is_one_gather():
    f = lambda x, s: lax.dynamic_slice(x, (s, 1), (2, 3))  # noqa: E731
    jaxpr = primitives(vmap(f), np.zeros((7, 5, 4), np.float32), np.zeros(7, np.int32))
    assert jaxpr["gather"] == 1 and "dynamic_slice" not in jaxpr


def test_gather_and_scatter_with_narrow_indices_and_a_large_batch():
    """An int8 index cannot hold the example number 199: the indices are widened."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 4)).astype(np.float32)
    i = rng.integers(0, 4, (200, 3, 1)).astype(np.int8)
    u = rng.standard_normal((200, 3)).astype(np.float32)
    get = lambda x, i: lax.gather(x, i, axes=0)  # noqa: E731
    add = lambda x, i, u: lax.scatter_add(x, i, u, axes=0)  # noqa: E731
    assert_bitwise(vmap(get)(x, i), one_by_one(get, [x, i], (0, 0), 200)[0])
    assert_bitwise(vmap(add)(x, i, u), one_by_one(add, [x, i, u], (0, 0, 0), 200)[0])


def test_unsigned_starts_beyond_the_index_range_clamp_as_unbatched():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    starts = np.array([0, 3, 4_000_000_000], np.uint32)
    f = lambda x, s: lax.dynamic_slice(x, (0, s), (4, 2))  # noqa: E731
    xs = np.stack([x] * 3)
    assert_bitwise(vmap(f)(xs, starts), np.stack([f(x, s) for s in starts]))
