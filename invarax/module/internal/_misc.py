"""Small helpers of ``equinox.internal``: ``ContainerMeta``, ``scan_trick``,
``eval_empty``/``eval_zero``, ``left_broadcast_to``, ``nextafter``/
``prevbefore``, ``str2jax``, ``GetKey``, ``hashable_partition``/``hashable_combine`` and
``cached_filter_eval_shape``."""

from __future__ import annotations

import dataclasses
import functools
import os
import random as _random

from ...core.aval import ShapeDtypeStruct
from ...core.pytree import tree_flatten, tree_map, tree_unflatten
from ...transforms._custom_jvp import custom_jvp
from .._filters import is_array
from .._make_jaxpr import filter_eval_shape
from .._module import Module
from ._nontraceable import nonbatchable


class ContainerMeta(type):
    """(Deprecated in Equinox.) A class whose attributes become 0, 1, 2, ...; indexing the
    class gives back the original value, and ``isinstance(x, cls)`` holds for an int or
    an integer scalar array.

    Example:
        >>> class Colours(metaclass=ContainerMeta):
        ...     red = "warm"
        ...     blue = "cold"
        >>> Colours.blue, Colours[Colours.blue], len(Colours)
        (1, 'cold', 2)
    """

    def __new__(mcs, name, bases, namespace):
        if "reverse_lookup" in namespace:
            raise ValueError("ContainerMeta: 'reverse_lookup' is reserved")
        body, reverse_lookup = {}, []
        for key, value in namespace.items():
            if key.startswith("__") and key.endswith("__"):
                body[key] = value
            else:
                body[key] = len(reverse_lookup)
                reverse_lookup.append(value)
        body["reverse_lookup"] = reverse_lookup
        return super().__new__(mcs, name, bases, body)

    def __instancecheck__(cls, instance):
        import numpy as np

        if is_array(instance):
            return instance.shape == () and np.issubdtype(instance.dtype, np.integer)
        return isinstance(instance, int) or super().__instancecheck__(instance)

    def __getitem__(cls, item):
        return cls.reverse_lookup[item]

    def __len__(cls):
        return len(cls.reverse_lookup)


def scan_trick(fn, intermediates, init):
    """``fn`` applied ``len(intermediates) + 1`` times, with ``intermediates[i]`` applied
    after the ``i``-th time: one traced copy of ``fn`` in a ``scan`` (which compiles
    faster than ``fn`` traced once per step).

    Example:
        >>> scan_trick(lambda x: x * 2, [lambda x: x + 1], jnp.float32(1.0))  # (1*2+1)*2
        Array(6., dtype=float32)
    """
    from ... import lax
    from ... import numpy as jnp

    branches = [*intermediates, lambda x: x]

    def body(carry, step):
        return lax.switch(nonbatchable(step), branches, fn(carry)), None

    return lax.scan(body, init, xs=jnp.arange(len(branches)))[0]


def _eval_fill(fill, fn, *inputs):
    return tree_map(fill, filter_eval_shape(fn, *inputs))


def eval_empty(fn, *inputs):
    """Arrays shaped like ``fn(*inputs)``'s outputs (their values unspecified)."""
    from ... import numpy as jnp

    return _eval_fill(lambda x: jnp.empty(x.shape, x.dtype), fn, *inputs)


def eval_zero(fn, *inputs):
    """Zeros shaped like ``fn(*inputs)``'s outputs, without running ``fn``.

    Example:
        >>> eval_zero(lambda x: (x, x.sum()), jnp.ones(2))
        (Array([0., 0.], dtype=float32), Array(0., dtype=float32))
    """
    from ... import numpy as jnp

    return _eval_fill(lambda x: jnp.zeros(x.shape, x.dtype), fn, *inputs)


def left_broadcast_to(arr, shape):
    """``arr`` broadcast to ``shape`` aligning its leading axes (trailing ones added).

    Example:
        >>> left_broadcast_to(jnp.arange(2), (2, 3))
        Array([[0, 0, 0],
               [1, 1, 1]], dtype=int32)
    """
    from ... import numpy as jnp

    arr = arr.reshape(arr.shape + (1,) * (len(shape) - arr.ndim))
    return jnp.broadcast_to(arr, shape)


def _step(direction):
    """The float after (``+1``) or before (``-1``) ``x``; zero steps to the smallest
    normal number, not a subnormal (so that a jump at 0 is seen where subnormals flush)."""
    from ... import numpy as jnp

    @custom_jvp
    def step(x):
        y = jnp.nextafter(x, direction * jnp.inf)
        return jnp.where(x == 0, direction * jnp.finfo(x.dtype).tiny, y)

    @step.defjvp
    def _jvp(primals, tangents):
        return step(*primals), tangents[0]

    return step


nextafter = _step(1)
nextafter.__doc__ = "The floating point number after ``x`` (its derivative: 1)."
prevbefore = _step(-1)
prevbefore.__doc__ = "The floating point number before ``x`` (its derivative: 1)."


def str2jax(msg: str):
    """A pytree with no leaves whose ``repr`` is ``msg`` (a token usable as a static
    argument, e.g. to tell apart the cases of a primitive).

    Example:
        >>> str2jax("qr_token")
        qr_token
    """

    class M(Module):
        def __repr__(self):
            return msg

    M.__name__ = M.__qualname__ = msg
    return M()


@dataclasses.dataclass(eq=False)
class GetKey:
    """A test fixture's source of PRNG keys: each call folds in one more call count.

    The seed is ``EQX_GETKEY_SEED`` if set, else random (and shown in the repr, so a
    failing test can be rerun with it).
    """

    seed: int
    call: int
    key: object

    def __init__(self, seed: int | None = None):
        from ... import random

        if seed is None:
            env = os.environ.get("EQX_GETKEY_SEED")
            seed = int(env) if env is not None else _random.randint(0, 2**31 - 1)
        self.seed = seed
        self.call = 0
        self.key = random.PRNGKey(seed)

    def __call__(self):
        from ... import random

        self.call += 1
        return random.fold_in(self.key, self.call)


def hashable_partition(pytree, filter_fn):
    """``(dynamic leaves, (static leaves, treedef))``: tuples, None at the other part's
    leaves; the second is hashable when the static leaves are."""
    leaves, treedef = tree_flatten(pytree)
    dynamic = tuple(x if filter_fn(x) else None for x in leaves)
    static = tuple(None if filter_fn(x) else x for x in leaves)
    return dynamic, (static, treedef)


def hashable_combine(dynamic_leaves, static):
    """The inverse of ``hashable_partition``."""
    static_leaves, treedef = static
    return tree_unflatten(treedef, [d if s is None else s
                                    for d, s in zip(dynamic_leaves, static_leaves, strict=True)])


def _to_struct(x):
    return ShapeDtypeStruct(x.shape, x.dtype) if is_array(x) else x


@functools.cache
def _cached_eval_shape(leaves, treedef):
    fn, args, kwargs = tree_unflatten(treedef, leaves)
    return filter_eval_shape(fn, *args, **kwargs)


def cached_filter_eval_shape(fn, *args, **kwargs):
    """``filter_eval_shape(fn, *args, **kwargs)``, cached on the arguments' structure,
    shapes and dtypes (and their other leaves, which must be hashable)."""
    leaves, treedef = tree_flatten(tree_map(_to_struct, (fn, args, kwargs)))
    return _cached_eval_shape(tuple(leaves), treedef)
