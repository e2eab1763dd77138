"""Contractions of ``invarax.numpy``: matmul, dot, vdot, inner, outer, tensordot, einsum, trace.

Each lowers to one ``lax.dot_general`` per pair of operands, never to a multiply
followed by a sum, so every formulation of a contraction (``x @ W.T``,
``jnp.dot``, ``einsum('nk,mk->nm', x, W)``, ``tensordot``) reaches the one
contraction kernel (N4). Operands are promoted as in JAX, and the result dtype is
passed to ``dot_general`` as ``preferred_element_type``, as JAX does.
"""

from __future__ import annotations

from ..core import dtypes
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops._util import canonicalize_axis
from ..ops.contractions import dot_general
from ..ops.reductions import reduce_or, reduce_sum
from . import _einsum_spec
from ._promote import asarray_arg, convert, promote_dtypes, result_dtype
from ._reductions import sum as _jnp_sum


def _operands(name: str, *args, preferred_element_type=None):
    """``(arrays, dtype, weak)``: promoted operands of ``jnp.<name>`` and the result's dtype."""
    arrays = promote_dtypes(*(asarray_arg(x, name) for x in args))
    dtype, weak = result_dtype(*arrays)
    if preferred_element_type is not None:
        dtype, weak = dtypes.canonicalize(preferred_element_type), False
    return arrays, dtype, weak


def _contract(a, b, dimension_numbers, dtype, weak: bool):
    """One ``dot_general`` accumulating in ``dtype``; the result takes ``dtype`` and ``weak``."""
    out = dot_general(a, b, dimension_numbers, preferred_element_type=dtype)
    return convert(out, dtype, weak)


def _check_aligned(name: str, a, b, a_axes, b_axes) -> None:
    """Raise a ValueError naming both shapes unless ``a_axes`` and ``b_axes`` have equal sizes."""
    a_sizes = tuple(a.shape[d] for d in a_axes)
    b_sizes = tuple(b.shape[d] for d in b_axes)
    if a_sizes != b_sizes:
        raise ValueError(
            f"{name}: shapes {a.shape} and {b.shape} are not aligned: the contracted axes "
            f"{tuple(a_axes)} of the first and {tuple(b_axes)} of the second have sizes "
            f"{a_sizes} != {b_sizes}"
        )


def _ravel(x):
    return sh.reshape(x, (x.size,))


def _sum(x, axes):
    """The einsum sum over ``axes``: ``reduce_sum``, or for bools ``reduce_or`` (as JAX)."""
    return reduce_or(x, axes) if x.dtype == dtypes.bool_ else reduce_sum(x, axes)


def _diagonal(x, axes):
    """``x`` with ``axes`` (all of one size ``n``) replaced by one last axis: their diagonal.

    The axes are moved last and merged (size ``n**k``); the diagonal is then every
    ``(1 + n + ... + n**(k-1))``-th element, a strided slice, so no gather is needed.

    Example:
        >>> _diagonal(jnp.arange(9).reshape(3, 3), (0, 1))
        Array([0, 4, 8], dtype=int32)
    """
    n, k = x.shape[axes[0]], len(axes)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = sh.transpose(x, [*rest, *axes])
    flat = sh.reshape(moved, (*moved.shape[: len(rest)], n**k))
    stride = sum(n**j for j in range(k))
    return sh.slice_in_dim(flat, 0, n**k, stride, axis=-1)


# ---------------------------------------------------------------------------------------
# matmul: batch dimensions broadcast; 1-d operands are promoted to matrices and back.


def _matmul_error(a, b, k_a: int, k_b: int) -> ValueError:
    if b.ndim > 1 and a.shape[-1] == b.shape[-1]:
        hint = "did you mean x @ y.T (y.mT for stacks of matrices)?"
    elif a.ndim > 1 and a.shape[-2] == k_b:
        hint = "did you mean x.T @ y (x.mT for stacks of matrices)?"
    else:
        hint = "transpose or reshape an operand so that they match."
    return ValueError(
        f"matmul: inner dimensions do not match: x has shape {a.shape} and y has shape "
        f"{b.shape} ({k_a} != {k_b}); x @ y contracts the last axis of x with the "
        f"second-to-last axis of y (its only axis if y is 1-d); {hint}"
    )


def _batch_kind(size_a, size_b) -> str:
    """How one broadcast batch position is contracted: ``batch``, ``a``/``b`` free, or ``ones``.

    A size of None means the operand has no axis there; a size-1 axis facing another
    size broadcasts, so it is squeezed and the other operand's axis is free.

    Example:
        >>> _batch_kind(None, 1), _batch_kind(1, 5), _batch_kind(5, 5), _batch_kind(1, 1)
        ('b', 'b', 'batch', 'ones')
    """
    if size_a is None:
        return "b"
    if size_b is None:
        return "a"
    if size_a == size_b:
        return "ones" if size_a == 1 else "batch"
    if 1 not in (size_a, size_b):
        return "mismatch"
    return "a" if size_b == 1 else "b"


def _squeezed(x, n_batch: int, kinds, own: str):
    """``x`` without its size-1 batch axes that are not its own, and the positions it keeps.

    Arguments:
        x: a matmul operand with ``n_batch`` batch axes, aligned to the right of ``kinds``.
        kinds: ``_batch_kind`` of each broadcast batch position.
        own: ``"a"`` or ``"b"``: which operand ``x`` is.

    Returns:
        ``(x, positions)``: ``x`` squeezed, and the broadcast positions of its batch axes.

    Example:
        >>> _squeezed(jnp.ones((1, 2, 3)), 1, ["b"], "a")[0].shape
        (2, 3)
    """
    lead = len(kinds) - n_batch
    present = range(lead, len(kinds))
    kept = [p for p in present if kinds[p] in ("batch", own)]
    x = sh.squeeze(x, [p - lead for p in present if kinds[p] not in ("batch", own)])
    return x, kept


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules: batch dimensions broadcast, 1-d operands are vectors.

    Arguments:
        a, b: arrays of at least 1 dimension; ``a.shape[-1]`` must equal
            ``b.shape[-2]`` (``b.shape[0]`` if ``b`` is 1-d).
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype; by default the
            promoted dtype of ``a`` and ``b``.

    Returns:
        The product: shape ``broadcast(a.shape[:-2], b.shape[:-2]) + (M, N)``, without
        ``M`` if ``a`` is 1-d and without ``N`` if ``b`` is 1-d.

    Example:
        >>> jnp.matmul(jnp.ones((2, 1, 3, 4)), jnp.ones((5, 4, 6))).shape
        (2, 5, 3, 6)
    """
    (a, b), dtype, weak = _operands("matmul", a, b, preferred_element_type=preferred_element_type)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"matmul: operand {i} is 0-d (shape ()); matmul needs arrays of at least one "
                "dimension. Use jnp.multiply (or *) to scale by a scalar."
            )
    a_mat, b_mat = a.ndim > 1, b.ndim > 1
    k_a, k_b = a.shape[-1], b.shape[-2] if b_mat else b.shape[0]
    if k_a != k_b:
        raise _matmul_error(a, b, k_a, k_b)
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    n = max(len(a_batch), len(b_batch))
    sizes_a = (None,) * (n - len(a_batch)) + a_batch
    sizes_b = (None,) * (n - len(b_batch)) + b_batch
    kinds = [_batch_kind(sa, sb) for sa, sb in zip(sizes_a, sizes_b, strict=True)]
    if "mismatch" in kinds:
        raise ValueError(
            f"matmul: batch dimensions do not broadcast: x has shape {a.shape} and y has shape "
            f"{b.shape} (batch shapes {a_batch} and {b_batch}); each leading dimension must be "
            "equal, or 1, or missing"
        )
    a, a_pos = _squeezed(a, len(a_batch), kinds, "a")
    b, b_pos = _squeezed(b, len(b_batch), kinds, "b")
    batch = [p for p, kind in enumerate(kinds) if kind == "batch"]
    dims = (
        ((a.ndim - 1,), (b.ndim - 2 if b_mat else 0,)),
        (tuple(a_pos.index(p) for p in batch), tuple(b_pos.index(p) for p in batch)),
    )
    out = _contract(a, b, dims, dtype, weak)
    out = sh.transpose(out, _matmul_permutation(kinds, a_pos, b_pos, a_mat, b_mat))
    ones = [p for p, kind in enumerate(kinds) if kind == "ones"]
    return sh.expand_dims(out, ones) if ones else out


def _matmul_permutation(kinds, a_pos, b_pos, a_mat: bool, b_mat: bool) -> list:
    """The transpose from ``dot_general``'s output order to matmul's (``ones`` positions omitted).

    ``dot_general`` gives (batch positions, ``a``'s free batch positions, ``a``'s rows,
    ``b``'s free batch positions, ``b``'s columns); matmul wants the batch positions
    in order, then the rows and the columns.

    Example:
        >>> _matmul_permutation(["a", "b"], [0], [1], True, True)  # (2,1,3,4) @ (5,4,6)
        [0, 2, 1, 3]
    """
    rows, cols = (["m"] if a_mat else []), (["n"] if b_mat else [])
    batch = [p for p, kind in enumerate(kinds) if kind == "batch"]
    order = [*batch, *(p for p in a_pos if kinds[p] == "a"), *rows]
    order += [*(p for p in b_pos if kinds[p] == "b"), *cols]
    wanted = [*(p for p, kind in enumerate(kinds) if kind != "ones"), *rows, *cols]
    return [order.index(p) for p in wanted]


# ---------------------------------------------------------------------------------------
# dot, vdot, inner, outer, tensordot.


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's ``dot``: a sum product over the last axis of ``a`` and the second-to-last of ``b``.

    Arguments:
        a, b: arrays. A 0-d operand scales the other; a 1-d ``b`` is contracted over
            its only axis.
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype; by default the
            promoted dtype of ``a`` and ``b``.

    Returns:
        An array of shape ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``.

    Example:
        >>> jnp.dot(jnp.ones((2, 3)), jnp.ones((4, 3, 5))).shape
        (2, 4, 5)
    """
    (a, b), dtype, weak = _operands("dot", a, b, preferred_element_type=preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract = ((), ())
    else:
        contract = ((a.ndim - 1,), (max(b.ndim - 2, 0),))
    _check_aligned("dot", a, b, *contract)
    return _contract(a, b, (contract, ((), ())), dtype, weak)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, conjugating ``a`` if it is complex.

    Arguments:
        a, b: arrays of the same size (any shapes).
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype.

    Returns:
        A 0-d array: ``sum(conj(a.ravel()) * b.ravel())``.

    Example:
        >>> jnp.vdot(jnp.array([1 + 2j, 3j]), jnp.array([1.0, 1.0]))
        Array(1.-5.j, dtype=complex64)
    """
    (a, b), dtype, weak = _operands("vdot", a, b, preferred_element_type=preferred_element_type)
    if a.dtype.kind == "c":
        a = ew.conj(a)
    a, b = _ravel(a), _ravel(b)
    _check_aligned("vdot", a, b, (0,), (0,))
    return _contract(a, b, (((0,), (0,)), ((), ())), dtype, weak)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """The sum product over the last axes of ``a`` and ``b`` (a 0-d operand scales the other).

    Arguments:
        a, b: arrays whose last axes have equal sizes.
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype.

    Returns:
        An array of shape ``a.shape[:-1] + b.shape[:-1]``.

    Example:
        >>> jnp.inner(jnp.ones((2, 3)), jnp.ones((4, 3))).shape
        (2, 4)
    """
    (a, b), dtype, weak = _operands("inner", a, b, preferred_element_type=preferred_element_type)
    contract = ((), ()) if a.ndim == 0 or b.ndim == 0 else ((a.ndim - 1,), (b.ndim - 1,))
    _check_aligned("inner", a, b, *contract)
    return _contract(a, b, (contract, ((), ())), dtype, weak)


def outer(a, b, out=None):
    """The outer product of the flattened arrays: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``.

    Arguments:
        a, b: arrays (flattened first).
        out: not supported (arrays are immutable); must be None.

    Returns:
        An array of shape ``(a.size, b.size)``.

    Example:
        >>> jnp.outer(jnp.arange(2), jnp.arange(3))
        Array([[0, 0, 0],
               [0, 1, 2]], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.outer: the out argument is not supported; use the result")
    (a, b), dtype, weak = _operands("outer", a, b)
    return _contract(_ravel(a), _ravel(b), (((), ()), ((), ())), dtype, weak)


def _tensordot_axes(a, b, axes) -> tuple[tuple, tuple]:
    """``(a_axes, b_axes)`` of ``tensordot(a, b, axes)``, non-negative and checked."""
    if isinstance(axes, int):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={axes} must be between 0 and the smaller rank "
                f"{min(a.ndim, b.ndim)} of the operands (shapes {a.shape} and {b.shape})"
            )
        return tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise TypeError(
            f"tensordot: axes must be an int or a pair of sequences of axes, e.g. "
            f"([1], [0]), got {axes!r}"
        ) from None
    a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(
            f"tensordot: axes {axes!r} must list as many axes of the first operand as of the "
            f"second, got {len(a_axes)} and {len(b_axes)}"
        )
    return (
        tuple(canonicalize_axis(d, a.ndim, "tensordot axis") for d in a_axes),
        tuple(canonicalize_axis(d, b.ndim, "tensordot axis") for d in b_axes),
    )


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """The sum product over the given axes of ``a`` and ``b``.

    Arguments:
        a, b: arrays.
        axes: an int ``n`` (the last ``n`` axes of ``a`` with the first ``n`` of ``b``),
            or a pair ``(a_axes, b_axes)`` of ints or sequences of axes, paired in order.
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype.

    Returns:
        An array whose axes are the free axes of ``a`` followed by those of ``b``.

    Example:
        >>> jnp.tensordot(jnp.ones((2, 3, 4)), jnp.ones((4, 3, 5)), ([1, 2], [1, 0])).shape
        (2, 5)
    """
    (a, b), dtype, weak = _operands(
        "tensordot", a, b, preferred_element_type=preferred_element_type
    )
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    _check_aligned("tensordot", a, b, a_axes, b_axes)
    return _contract(a, b, ((a_axes, b_axes), ((), ())), dtype, weak)


# ---------------------------------------------------------------------------------------
# einsum: diagonals, broadcasting and one-operand sums first, then pairwise dot_generals
# from left to right.


def _take_diagonals(x, labels):
    """Replace the axes of each label repeated in ``labels`` by their diagonal."""
    for label in dict.fromkeys(labels):
        axes = tuple(i for i, lb in enumerate(labels) if lb == label)
        if len(axes) > 1:
            x = _diagonal(x, axes)
            labels = [lb for lb in labels if lb != label] + [label]
    return x, labels


def _drop_broadcast(x, labels, sizes):
    """Squeeze the size-1 axes whose label has another size elsewhere (they broadcast)."""
    drop = [i for i, label in enumerate(labels) if x.shape[i] == 1 != sizes[label]]
    return sh.squeeze(x, drop), [lb for i, lb in enumerate(labels) if i not in drop]


def _sum_unique(x, labels, keep):
    """Sum out the axes whose label is in no other operand and not in the output."""
    axes = [i for i, label in enumerate(labels) if label not in keep]
    if axes:
        x = _sum(x, axes)
    return x, [label for label in labels if label in keep]


def _einsum_pair(a, a_labels, b, b_labels, keep, dtype):
    """One ``dot_general`` of two labelled operands; labels in ``keep`` survive.

    Shared labels that are kept are batch axes, the other shared ones are
    contracted; every other label is free (one-operand sums happened before).

    Returns:
        ``(result, labels)``, the labels in ``dot_general``'s output order.
    """
    shared = [label for label in a_labels if label in b_labels]
    batch = [label for label in shared if label in keep]
    summed = [label for label in shared if label not in keep]
    dims = (
        (tuple(a_labels.index(lb) for lb in summed), tuple(b_labels.index(lb) for lb in summed)),
        (tuple(a_labels.index(lb) for lb in batch), tuple(b_labels.index(lb) for lb in batch)),
    )
    out = dot_general(a, b, dims, preferred_element_type=dtype)
    a_free = [label for label in a_labels if label not in b_labels]
    b_free = [label for label in b_labels if label not in a_labels]
    return out, [*batch, *a_free, *b_free]


def _einsum_terms(arrays, in_labels, out_labels) -> list:
    """The operands ready for pairwise contraction, as ``(array, labels)`` with unique labels.

    Diagonals are taken, size-1 axes that broadcast are squeezed, and the labels that
    no other operand and not the output uses are summed out.
    """
    sizes = _einsum_spec.label_sizes(in_labels, [x.shape for x in arrays])
    terms = [
        _drop_broadcast(*_take_diagonals(x, labels), sizes)
        for x, labels in zip(arrays, in_labels, strict=True)
    ]
    for i, (x, labels) in enumerate(terms):
        others = {label for j, (_, lbs) in enumerate(terms) if j != i for label in lbs}
        terms[i] = _sum_unique(x, labels, others.union(out_labels))
    return terms


def einsum(
    subscripts, /, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None
):
    """Einstein summation: contract labelled axes of any number of operands.

    Repeated indices within one operand take a diagonal; indices used by one operand
    only (and not in the output) are summed; then the operands are contracted pairwise
    from left to right, one ``dot_general`` per pair, so the order of operations
    depends only on the spec and the shapes.

    Arguments:
        subscripts: the spec, e.g. ``'ij,jk->ik'``; without ``->`` the output is the
            indices used once, alphabetically (``'ij,jk'`` is ``'ij,jk->ik'``); ``...``
            stands for broadcast axes. The interleaved form
            ``einsum(x, [0, 1], y, [1, 2], [0, 2])`` is accepted too.
        operands: the arrays, one per comma-separated term.
        out: not supported; must be None.
        optimize: accepted for JAX compatibility and ignored (the order is always
            left to right, so results never depend on a path search).
        precision: accepted for JAX compatibility and ignored.
        preferred_element_type: the result (and accumulation) dtype; by default the
            promoted dtype of the operands.

    Returns:
        The contracted array, its axes in the order of the output indices.

    Example:
        >>> jnp.einsum("nk,mk->nm", jnp.ones((2, 3)), jnp.ones((4, 3))).shape
        (2, 4)
    """
    if out is not None:
        raise NotImplementedError("jnp.einsum: the out argument is not supported")
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_spec.interleaved((subscripts, *operands))
    if not operands:
        raise ValueError("einsum needs at least one operand")
    arrays, dtype, weak = _operands(
        "einsum", *operands, preferred_element_type=preferred_element_type
    )
    in_labels, out_labels = _einsum_spec.parse(subscripts, [x.shape for x in arrays])
    terms = _einsum_terms(arrays, in_labels, out_labels)
    result, labels = terms[0]
    for i, (x, x_labels) in enumerate(terms[1:], start=1):
        later = {label for _, lbs in terms[i + 1 :] for label in lbs}
        result, labels = _einsum_pair(result, labels, x, x_labels, later.union(out_labels), dtype)
    result = sh.transpose(result, [labels.index(label) for label in out_labels])
    return convert(result, dtype, weak)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along a diagonal of ``a``.

    Arguments:
        a: an array of at least 2 dimensions.
        offset: the diagonal: 0 the main one, positive above it, negative below.
        axis1, axis2: the two axes whose diagonal is summed.
        dtype: the result dtype; by default that of ``jnp.sum`` (small integers widen).
        out: not supported; must be None.

    Returns:
        ``a`` without ``axis1`` and ``axis2``, holding the diagonal sums.

    Example:
        >>> jnp.trace(jnp.arange(9).reshape(3, 3))
        Array(12, dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.trace: the out argument is not supported")
    a = asarray_arg(a, "trace")
    if a.ndim < 2:
        raise ValueError(f"trace needs an array of at least 2 dimensions, got shape {a.shape}")
    ax1 = canonicalize_axis(axis1, a.ndim, "trace axis1")
    ax2 = canonicalize_axis(axis2, a.ndim, "trace axis2")
    if ax1 == ax2:
        raise ValueError(f"trace: axis1 and axis2 must differ, both are axis {ax1}")
    rest = [d for d in range(a.ndim) if d not in (ax1, ax2)]
    x = sh.transpose(a, [*rest, ax1, ax2])
    rows, cols = x.shape[-2:]
    r0, c0 = min(max(-offset, 0), rows), min(max(offset, 0), cols)
    n = min(rows - r0, cols - c0)
    x = sh.slice(x, [0] * len(rest) + [r0, c0], [*x.shape[:-2], r0 + n, c0 + n])
    return _jnp_sum(_diagonal(x, (x.ndim - 2, x.ndim - 1)), axis=-1, dtype=dtype)
