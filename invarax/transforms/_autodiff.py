"""The autodiff API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian."""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes
from ..core.api_util import fun_name
from ..core.array import Array, ArrayImpl, is_python_scalar, to_array
from ..core.pytree import tree_flatten, tree_unflatten
from ..distributed.types import lenient, like_primals
from ..interpreters import ad
from ..ops.elementwise import convert_element_type
from ..ops.shape import reshape, slice_in_dim
from ._vmap import vmap


def wraps(fun):
    """``functools.wraps(fun)``, but without copying ``fun.__dict__`` onto the wrapper.

    A jitted function keeps its state (its function, its cache) in its ``__dict__``; a
    wrapper that copied it would take that state over (and ``jit`` of the wrapper would
    then run the inner function instead).

    Arguments:
        fun: the wrapped function.

    Returns:
        A decorator giving the wrapper ``fun``'s name, docstring and ``__wrapped__``.

    Example:
        >>> @wraps(jnp.sin)
        ... def g(x):
        ...     return jnp.sin(x)
        >>> g.__name__
        'sin'
    """
    return functools.wraps(fun, updated=())


class _Flat:
    """``fun`` on a flat list of leaves; records the output (and aux) structure."""

    def __init__(self, fun, in_tree, has_aux: bool, who: str):
        self.fun, self.in_tree, self.has_aux, self.who = fun, in_tree, has_aux, who
        self.out_tree = self.aux_tree = None
        self.num_out = 0

    def __call__(self, leaves):
        out = self.fun(*tree_unflatten(self.in_tree, leaves))
        aux = ()
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                got = type(out).__name__
                if isinstance(out, (tuple, list)):
                    got += f" of length {len(out)}"
                raise TypeError(
                    f"{self.who} with has_aux=True requires the function to return a pair "
                    f"(output, aux); it returned a {got}"
                )
            out, aux = out
        out_leaves, self.out_tree = tree_flatten(out)
        aux_leaves, self.aux_tree = tree_flatten(aux)
        self.num_out = len(out_leaves)
        # As JAX: aux leaves that are not arrays (strings, Python numbers, ...) are
        # returned as they are; only arrays go through the transformation.
        self.aux_kept = [None if isinstance(a, Array) else a for a in aux_leaves]
        return out_leaves + [a for a in aux_leaves if isinstance(a, Array)]

    def split(self, leaves):
        """``(out, aux)`` pytrees from the flat outputs (aux is None without has_aux)."""
        out = tree_unflatten(self.out_tree, leaves[: self.num_out])
        if not self.has_aux:
            return out, None
        traced = iter(leaves[self.num_out :])
        aux_leaves = [next(traced) if a is None else a for a in self.aux_kept]
        return out, tree_unflatten(self.aux_tree, aux_leaves)


def _leaves(tree, what):
    leaves, treedef = tree_flatten(tree)
    return [to_array(x, what) for x in leaves], treedef


def _check_tangents(primals, tangents, in_tree, t_tree):
    if in_tree != t_tree:
        raise TypeError(
            f"primal and tangent arguments must have the same tree structure; got "
            f"{in_tree} and {t_tree}"
        )
    for p, t in zip(primals, tangents, strict=True):
        if p.shape != t.shape:
            raise ValueError(
                f"a primal of shape {p.shape} got a tangent of shape {t.shape}; "
                "each tangent must have its primal's shape"
            )
        if dtypes.is_inexact(p.dtype) and t.dtype != p.dtype:
            raise TypeError(
                f"a primal of dtype {p.dtype} got a tangent of dtype {t.dtype}; "
                "each tangent must have its primal's dtype (use .astype)"
            )


def jvp(fun, primals, tangents, has_aux: bool = False):
    """Forward mode: evaluate ``fun`` and its Jacobian-vector product.

    Arguments:
        fun: a function of arrays (pytrees allowed).
        primals: a tuple or list of the arguments.
        tangents: the tangents, with the structure, shapes and dtypes of ``primals``
            (tangents of integer primals are ignored).
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        ``(primals_out, tangents_out)``, and ``aux`` third with ``has_aux``.

    Example:
        >>> jvp(jnp.sin, (0.0,), (1.0,))
        (Array(0., dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples: jvp(f, (x,), (t,))")
    p_leaves, in_tree = _leaves(tuple(primals), "a jvp primal")
    t_leaves, t_tree = _leaves(tuple(tangents), "a jvp tangent")
    _check_tangents(p_leaves, t_leaves, in_tree, t_tree)
    t_leaves = [
        t if ad.is_differentiable(p.aval) else ad.Zero(p.aval)
        for p, t in zip(p_leaves, t_leaves, strict=True)
    ]
    # As JAX: a Python scalar primal (with its tangent) returned as it is comes back as it
    # was given, and a custom JVP rule gets it so
    raws = [(p, t) if is_python_scalar(p) and not isinstance(tl, ad.Zero) else None
            for p, t, tl in zip(tree_flatten(tuple(primals))[0],
                                tree_flatten(tuple(tangents))[0], t_leaves, strict=True)]
    flat = _Flat(fun, in_tree, has_aux, "jvp")
    outs, touts = ad.jvp_flat(flat, p_leaves, t_leaves, f"jvp of {fun_name(fun)}", raws)
    out, aux = flat.split(outs)
    tout, _ = flat.split([ad.instantiate(t) for t in touts])
    return (out, tout, aux) if has_aux else (out, tout)


def linearize(fun, *primals, has_aux: bool = False):
    """Evaluate ``fun`` and return its linear approximation at ``primals``.

    Arguments:
        fun: a function of arrays (pytrees allowed).
        primals: its arguments.
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        ``(out, f_jvp)`` (and ``aux``): ``f_jvp(*tangents)`` evaluates the staged linear
        jaxpr, available as ``f_jvp.jaxpr``; it does no primal work.

    Example:
        >>> y, f_jvp = linearize(jnp.sin, 1.0)
        >>> f_jvp(2.0)
        Array(1.0806046, dtype=float32, weak_type=True)
    """
    return _linearize(fun, primals, has_aux, "linearize", fun_name(fun))


def _linearize(fun, primals, has_aux, who, name):
    """``linearize``, named in errors as ``who`` (the transformation the user called) of
    ``name`` (the user's function)."""
    p_leaves, in_tree = _leaves(primals, "a linearize primal")
    flat = _Flat(fun, in_tree, has_aux, who)
    outs, lin = ad.linearize_flat(flat, p_leaves, f"{who} of {name}")
    out, aux = flat.split(outs)
    diff = [ad.is_differentiable(p.aval) for p in p_leaves]

    def f_jvp(*tangents):
        t_leaves, t_tree = _leaves(tangents, "a tangent")
        _check_tangents(p_leaves, t_leaves, in_tree, t_tree)
        with lenient():  # (the linear map may hold transposed operations)
            touts = lin([t for t, d in zip(t_leaves, diff, strict=True) if d])
        return tree_unflatten(flat.out_tree, touts[: flat.num_out])

    f_jvp.jaxpr = lin.jaxpr
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def vjp(fun, *primals, has_aux: bool = False):
    """Reverse mode: evaluate ``fun`` and return a function of output cotangents.

    Arguments:
        fun: a function of arrays (pytrees allowed).
        primals: its arguments.
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        ``(out, vjp_fun)`` (and ``aux``). ``vjp_fun(ct)`` takes a cotangent with the
        structure, shapes and dtypes of ``out`` and returns a tuple of cotangents,
        one per primal.

    Example:
        >>> y, f_vjp = vjp(jnp.sin, 0.0)
        >>> f_vjp(1.0)
        (Array(1., dtype=float32, weak_type=True),)
    """
    return _vjp(fun, primals, has_aux, "vjp", fun_name(fun))


def _vjp(fun, primals, has_aux, who, name):
    """``vjp``, named in errors as ``who`` (the transformation the user called) of ``name``
    (the user's function)."""
    p_leaves, in_tree = _leaves(primals, "a vjp primal")
    flat = _Flat(fun, in_tree, has_aux, who)
    outs, lin = ad.linearize_flat(flat, p_leaves, f"{who} of {name}")
    out, aux = flat.split(outs)
    out_avals = [o.aval for o in outs[: flat.num_out]]

    def vjp_fun(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != flat.out_tree:
            raise TypeError(
                f"the cotangent passed to the vjp function must have the output's structure "
                f"{flat.out_tree}, got {ct_tree}"
            )
        cts = []
        for c, aval in zip(ct_leaves, out_avals, strict=True):
            c = to_array(c, "a cotangent")
            if c.shape != aval.shape:
                raise ValueError(
                    f"a cotangent of shape {c.shape} was given for an output of shape "
                    f"{aval.shape}; they must match"
                )
            cts.append(c)
        cts += [ad.Zero(ad.tangent_aval(o.aval)) for o in outs[flat.num_out :]]
        with lenient():  # (placed as their primals: like_primals)
            in_cts = iter(lin.transpose(cts))
        leaves = [
            ad.instantiate(next(in_cts)) if ad.is_differentiable(p.aval)
            else ad.zeros_like_aval(p.aval)
            for p in p_leaves
        ]
        return tree_unflatten(in_tree, like_primals(leaves, p_leaves))

    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def _argnums(fun, argnums, args, who):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -len(args) <= i < len(args):
            raise TypeError(
                f"{who}: argnums={argnums} is out of range for {fun_name(fun)} called with "
                f"{len(args)} positional argument(s)"
            )
    return [i % len(args) for i in nums]


def _partial_argnums(fun, argnums, args, kwargs, who):
    """``(f_dyn, dyn)``: ``fun`` as a function of the arguments ``argnums`` alone, and those."""
    nums = _argnums(fun, argnums, args, who)

    def f_dyn(*dyn):
        full = list(args)
        for i, v in zip(nums, dyn, strict=True):
            full[i] = v
        return fun(*full, **kwargs)

    return f_dyn, tuple(args[i] for i in nums)


def _check_rev_inputs(tree, who, holomorphic, allow_int):
    """Reverse mode (grad, jacrev) differentiates float inputs (complex ones if holomorphic)."""
    for leaf in tree_flatten(tree)[0]:
        dtype = to_array(leaf, f"a {who} argument").dtype
        if holomorphic and dtype.kind != "c":
            raise TypeError(
                f"{who} with holomorphic=True requires inputs with complex dtype, but got "
                f"{dtype.name}."
            )
        if not dtypes.is_inexact(dtype) and not allow_int:
            key_hint = (
                " PRNG keys (uint32 arrays from random.PRNGKey/split) cannot be differentiated:"
                " pass the key as a separate argument outside argnums, or close over it."
                if dtype == dtypes.uint32 else ""
            )
            raise TypeError(
                f"{who} requires real- or complex-valued inputs (a float dtype), but got "
                f"{dtype.name}. Use jvp/vjp for integer inputs, convert the input with "
                f".astype(jnp.float32), or pass allow_int=True.{key_hint}"
            )


def _check_rev_output(x, who, holomorphic):
    """Reverse mode needs real float outputs, or complex ones with ``holomorphic=True``."""
    if holomorphic and x.dtype.kind != "c":
        raise TypeError(
            f"{who} with holomorphic=True requires outputs with complex dtype, but got "
            f"{x.dtype.name}."
        )
    if not holomorphic and x.dtype.kind == "c":
        raise TypeError(
            f"{who} requires real-valued outputs, but got {x.dtype.name}. For holomorphic "
            "differentiation pass holomorphic=True; for a non-holomorphic function of complex "
            "outputs use vjp directly."
        )
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(
            f"{who} requires real- or complex-valued outputs (a float dtype), but the output "
            f"has dtype {x.dtype.name}; compute a float value"
        )


def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False):
    """A function returning ``(fun(*args), gradient)`` (and aux inside the value).

    Arguments:
        fun: a function returning a scalar (float) output.
        argnums: which positional argument(s) to differentiate: an int or a tuple.
        has_aux: whether ``fun`` returns ``(output, aux)``; the value is then
            ``(output, aux)``.
        holomorphic: whether ``fun`` is holomorphic (complex inputs and output).
        allow_int: allow integer inputs (their gradient is zero).

    Returns:
        A function with ``fun``'s signature returning ``(value, grad)``; ``grad`` has
        the structure of the selected argument (a tuple for a tuple ``argnums``).

    Example:
        >>> value_and_grad(lambda x: x ** 2)(3.0)
        (Array(9., dtype=float32, weak_type=True), Array(6., dtype=float32, weak_type=True))
    """
    who = "grad"

    @wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        f_dyn, dyn = _partial_argnums(fun, argnums, args, kwargs, who)
        _check_rev_inputs(dyn, who, holomorphic, allow_int)
        res = _vjp(f_dyn, dyn, has_aux, who, fun_name(fun))
        out, vjp_fun = res[0], res[1]
        out_arr = _check_scalar_output(out, has_aux)
        _check_rev_output(out_arr, who, holomorphic)
        grads = vjp_fun(ArrayImpl(np.ones((), out_arr.dtype), out_arr.weak_type))
        grads = grads[0] if isinstance(argnums, int) else grads
        value = (out, res[2]) if has_aux else out
        return value, grads

    return value_and_grad_f


def _check_scalar_output(out, has_aux):
    leaves, tree = tree_flatten(out)
    if len(leaves) != 1 or not hasattr(leaves[0], "shape"):
        raise TypeError(
            f"grad requires a function returning one scalar array, got a pytree {tree}"
            + ("" if has_aux else "; if it returns (output, aux), pass has_aux=True")
        )
    x = to_array(leaves[0], "the output of the function given to grad")
    if x.shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {x.shape}. "
            "For non-scalar outputs use jacrev (or jacfwd) for the Jacobian, or vjp."
        )
    return x


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False):
    """The gradient of a scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Arguments:
        fun: a function returning a scalar (float) output (or ``(output, aux)``).
        argnums: an int or a tuple of ints.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(grad, aux)`` is returned.
        holomorphic: whether ``fun`` is holomorphic (complex inputs and output).
        allow_int: allow integer inputs (their gradient is zero).

    Returns:
        A function with ``fun``'s signature returning the gradient, structured as the
        selected argument(s).

    Example:
        >>> grad(jnp.sin)(0.0)
        Array(1., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps(fun)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


# ---------------------------------------------------------------------------------------
# Jacobians: the linear map (linearize's f_jvp, or vjp's vjp_fun) vmapped over a one-hot
# basis. By N1, each column (row) has the bits of one call of the linear map.


def _std_basis(leaves):
    """The one-hot basis of ``leaves`` flattened and concatenated (``n`` entries in all).

    Returns one concrete bool array per leaf, of shape ``(n, *leaf.shape)``: row ``i`` of
    all of them together is the ``i``-th unit vector. The linear map converts each row to
    its leaf's dtype (``_in_dtypes``): the same exact 0s and 1s, but a compiled Jacobian
    reads an ``n x n`` basis of one byte an entry, and converts it inside the fused group
    that multiplies it.
    """
    n = sum(x.size for x in leaves)
    basis, start = [], 0
    for x in leaves:
        rows = np.zeros((n, x.size), np.bool_)
        rows[start + np.arange(x.size), np.arange(x.size)] = True
        basis.append(ArrayImpl(rows.reshape((n, *x.shape))))
        start += x.size
    return basis


def _in_dtypes(units, leaves) -> list:
    """The basis vectors ``units`` (bool) in the dtypes of ``leaves``."""
    return [u.astype(x.dtype) for u, x in zip(units, leaves, strict=True)]


def _split(x, axis, sizes, shapes, weak_type):
    """Split ``x`` along ``axis`` into consecutive parts of ``sizes``, reshaped to ``shapes``.

    As JAX, the parts are weakly typed when the leaf they were computed for (the output
    for jacfwd, the input for jacrev) is.
    """
    parts, start = [], 0
    for size, shape in zip(sizes, shapes, strict=True):
        part = x if size == x.shape[axis] else slice_in_dim(x, start, start + size, axis=axis)
        part = part if part.shape == shape else reshape(part, shape)
        parts.append(convert_element_type(part, part.dtype, weak_type))
        start += size
    return parts


def _jacobian_tree(blocks, out_tree, in_tree, argnums):
    """``blocks[i][k]`` (output leaf i by input leaf k) in JAX's nesting: outputs outside."""
    def inner(row):
        tree = tree_unflatten(in_tree, row)
        return tree[0] if isinstance(argnums, int) else tree

    return tree_unflatten(out_tree, [inner(row) for row in blocks])


def _check_fwd_inputs(tree, holomorphic):
    """Forward-mode Jacobians need real float inputs (complex ones if holomorphic)."""
    for leaf in tree_flatten(tree)[0]:
        dtype = to_array(leaf, "a jacfwd argument").dtype
        if holomorphic and dtype.kind != "c":
            raise TypeError(
                f"jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                f"{dtype.name}."
            )
        if not holomorphic and dtypes.kind(dtype) != "f":
            raise TypeError(
                f"jacfwd requires real-valued inputs (a float dtype), but got {dtype.name}. "
                "For holomorphic differentiation pass holomorphic=True; for integer inputs "
                "or a non-holomorphic function of complex inputs use jvp directly."
            )


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of ``fun`` by forward mode: one JVP per input entry.

    ``fun`` is linearized once; the linear map is then vmapped over the one-hot input
    tangents (no primal work is repeated). Efficient for functions with few inputs.

    Arguments:
        fun: a function of arrays (pytrees allowed, in and out).
        argnums: which positional argument(s) to differentiate: an int or a tuple.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(jacobian, aux)``
            is returned.
        holomorphic: whether ``fun`` is holomorphic (complex inputs and outputs).

    Returns:
        A function with ``fun``'s signature returning the Jacobian: the structure of the
        output, each leaf replaced by the structure of the selected argument(s), with
        leaves of shape ``out_leaf.shape + in_leaf.shape``.

    Example:
        >>> jacfwd(lambda x: jnp.sin(x) * 2.0)(jnp.zeros(2))
        Array([[2., 0.],
               [0., 2.]], dtype=float32)
    """

    @wraps(fun)
    def jacfun(*args, **kwargs):
        f_dyn, dyn = _partial_argnums(fun, argnums, args, kwargs, "jacfwd")
        _check_fwd_inputs(dyn, holomorphic)
        res = _linearize(f_dyn, dyn, has_aux, "jacfwd", fun_name(fun))
        out, f_jvp = res[0], res[1]
        in_leaves, in_tree = _leaves(dyn, "a jacfwd argument")
        out_leaves, out_tree = _leaves(out, "a jacfwd output")
        if holomorphic and any(y.dtype.kind != "c" for y in out_leaves):
            raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype")

        def push(*units):
            tangents = _in_dtypes(units, in_leaves)
            return tree_flatten(f_jvp(*tree_unflatten(in_tree, tangents)))[0]

        sizes = [x.size for x in in_leaves]
        cols = vmap(push, out_axes=-1, axis_size=sum(sizes))(*_std_basis(in_leaves))
        blocks = [
            _split(col, -1, sizes, [y.shape + x.shape for x in in_leaves], y.weak_type)
            for y, col in zip(out_leaves, cols, strict=True)
        ]
        jac = _jacobian_tree(blocks, out_tree, in_tree, argnums)
        return (jac, res[2]) if has_aux else jac

    return jacfun


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """The Jacobian of ``fun`` by reverse mode: one VJP per output entry.

    ``fun`` is evaluated and linearized once; the transposed linear map is then vmapped
    over the one-hot output cotangents. Efficient for functions with few outputs.

    Arguments:
        fun: a function of arrays (pytrees allowed, in and out) with float outputs.
        argnums: which positional argument(s) to differentiate: an int or a tuple.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(jacobian, aux)``
            is returned.
        holomorphic: whether ``fun`` is holomorphic (complex inputs and outputs).
        allow_int: allow integer inputs (their Jacobian is zero).

    Returns:
        A function with ``fun``'s signature returning the Jacobian, structured as for
        ``jacfwd``: leaves of shape ``out_leaf.shape + in_leaf.shape``.

    Example:
        >>> jacrev(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
        (Array(3., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
    """

    @wraps(fun)
    def jacfun(*args, **kwargs):
        f_dyn, dyn = _partial_argnums(fun, argnums, args, kwargs, "jacrev")
        _check_rev_inputs(dyn, "jacrev", holomorphic, allow_int)
        res = _vjp(f_dyn, dyn, has_aux, "jacrev", fun_name(fun))
        out, vjp_fun = res[0], res[1]
        in_leaves, in_tree = _leaves(dyn, "a jacrev argument")
        out_leaves, out_tree = _leaves(out, "a jacrev output")
        for y in out_leaves:
            _check_rev_output(y, "jacrev", holomorphic)

        def pull(*units):
            cts = _in_dtypes(units, out_leaves)
            return tree_flatten(vjp_fun(tree_unflatten(out_tree, cts)))[0]

        sizes = [y.size for y in out_leaves]
        rows = vmap(pull, axis_size=sum(sizes))(*_std_basis(out_leaves))
        by_input = [
            _split(row, 0, sizes, [y.shape + x.shape for y in out_leaves], x.weak_type)
            for x, row in zip(in_leaves, rows, strict=True)
        ]
        blocks = list(zip(*by_input, strict=True)) if by_input else [[] for _ in out_leaves]
        jac = _jacobian_tree(blocks, out_tree, in_tree, argnums)
        return (jac, res[2]) if has_aux else jac

    return jacfun


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian of a scalar-valued ``fun``: ``jacfwd(jacrev(fun))`` (forward over reverse).

    Arguments:
        fun: a function of arrays returning a scalar (or ``(scalar, aux)``).
        argnums: which positional argument(s) to differentiate: an int or a tuple.
        has_aux: whether ``fun`` returns ``(output, aux)``; then ``(hessian, aux)``
            is returned.
        holomorphic: whether ``fun`` is holomorphic.

    Returns:
        A function with ``fun``'s signature returning the Hessian: for an argument of
        shape ``s``, an array of shape ``s + s`` (nested pytrees for pytree arguments).

    Example:
        >>> hessian(lambda x: x ** 3)(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    inner = jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, has_aux=has_aux, holomorphic=holomorphic)
