"""Parsing of ``einsum`` subscripts into labelled axes, with NumPy's and JAX's rules.

A *label* names one axis: a letter, or for the axes that ``...`` stands for, an int
counting from the right of the ellipsis block (so operands with fewer ellipsis
axes align from the right, as in broadcasting). Parsing only looks at strings and
shapes; ``jnp.einsum`` turns the labels into contractions.
"""

from __future__ import annotations

import string

_LETTERS = frozenset(string.ascii_letters)


def describe(label) -> str:
    """How an error message names ``label``: ``index 'j'``, or ``the '...' axis 0 from the right``.

    Example:
        >>> describe("j")
        "index 'j'"
    """
    if isinstance(label, str):
        return f"index '{label}'"
    return f"the '...' axis {label} from the right"


def _split(spec: str, term: str) -> tuple[str, bool, str]:
    """``(letters before '...', whether there is a '...', letters after)`` of one term."""
    before, dots, after = term.partition("...")
    for char in before + after:
        if char not in _LETTERS:
            raise ValueError(
                f"einsum: invalid character {char!r} in subscripts {spec!r}; use the letters "
                "a-z and A-Z for indices, ',' between operands, '->' before the output and "
                "'...' for broadcast axes"
            )
    return before, bool(dots), after


def _input_labels(spec: str, term: str, shape: tuple, i: int) -> list:
    before, dots, after = _split(spec, term)
    extra = len(shape) - len(before) - len(after)
    if extra < 0 or (extra and not dots):
        raise ValueError(
            f"einsum: operand {i} has {len(shape)} dimensions (shape {shape}) but its "
            f"subscripts {term!r} name {len(before) + len(after)}"
            + ("" if dots else "; add '...' to stand for the other dimensions")
        )
    return [*before, *range(extra - 1, -1, -1), *after]


def _output_labels(spec: str, term: str, in_labels: list, n_ellipsis: int) -> list:
    before, dots, after = _split(spec, term)
    labels = [*before, *(range(n_ellipsis - 1, -1, -1) if dots else ()), *after]
    seen = {label for labels_i in in_labels for label in labels_i}
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError(
                f"einsum: output {describe(label)} appears more than once in {spec!r}; "
                "list each output index once"
            )
        if label not in seen:
            raise ValueError(
                f"einsum: output {describe(label)} in {spec!r} does not appear in any input"
            )
    return labels


def _implicit_output(in_labels: list, n_ellipsis: int) -> list:
    """NumPy's implicit output: the ``...`` axes, then the letters used once, sorted."""
    letters = [label for labels in in_labels for label in labels if isinstance(label, str)]
    once = sorted(label for label in set(letters) if letters.count(label) == 1)
    return [*range(n_ellipsis - 1, -1, -1), *once]


def parse(spec: str, shapes) -> tuple[list, list]:
    """The labels of each operand's axes and of the output's, for ``einsum(spec, ...)``.

    Arguments:
        spec: the subscripts, e.g. ``'ij,jk->ik'``, ``'ij,jk'`` (implicit output:
            the indices used once, alphabetically) or ``'...ij,...jk'``.
        shapes: the operands' shapes.

    Returns:
        ``(in_labels, out_labels)``: a list of labels per operand, and the output's.
        A ValueError explains a malformed spec.

    Example:
        >>> parse("ij,jk", [(2, 3), (3, 4)])
        ([['i', 'j'], ['j', 'k']], ['i', 'k'])
    """
    if not isinstance(spec, str):
        raise TypeError(f"einsum: subscripts must be a str, got {type(spec).__name__}")
    compact = spec.replace(" ", "")
    inputs, arrow, output = compact.partition("->")
    if "->" in output:
        raise ValueError(f"einsum: subscripts {spec!r} contain '->' more than once")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: subscripts {spec!r} name {len(terms)} operand(s) but "
            f"{len(shapes)} were given; write one comma-separated term per operand"
        )
    in_labels = [
        _input_labels(spec, term, tuple(shape), i)
        for i, (term, shape) in enumerate(zip(terms, shapes, strict=True))
    ]
    n_ellipsis = max(sum(isinstance(lb, int) for lb in labels) for labels in in_labels)
    if arrow:
        return in_labels, _output_labels(spec, output, in_labels, n_ellipsis)
    return in_labels, _implicit_output(in_labels, n_ellipsis)


def label_sizes(in_labels, shapes) -> dict:
    """The size of each label; a size 1 broadcasts against any other size.

    Arguments:
        in_labels: the labels of each operand (from ``parse``).
        shapes: the operands' shapes.

    Returns:
        ``{label: size}``. A ValueError names both sizes, operands and shapes when a
        label has two sizes other than 1, or two sizes within one operand (a diagonal).

    Example:
        >>> label_sizes([["i", "j"], ["j"]], [(2, 3), (1,)])
        {'i': 2, 'j': 3}
    """
    sizes, where = {}, {}
    for i, (labels, shape) in enumerate(zip(in_labels, shapes, strict=True)):
        local = {}
        for label, size in zip(labels, shape, strict=True):
            if local.setdefault(label, size) != size:
                raise ValueError(
                    f"einsum: {describe(label)} is repeated in operand {i} (shape "
                    f"{tuple(shape)}) with sizes {local[label]} and {size}; a repeated index "
                    "takes a diagonal, so its sizes must be equal"
                )
        for label, size in local.items():
            known = sizes.setdefault(label, size)
            if 1 != size != known != 1:
                first = where[label]
                raise ValueError(
                    f"einsum: {describe(label)} has size {known} in operand {first} (shape "
                    f"{tuple(shapes[first])}) but size {size} in operand {i} (shape "
                    f"{tuple(shape)}); the sizes of an index must be equal (or 1, which "
                    "broadcasts)"
                )
            if known == 1 or label not in where:
                sizes[label], where[label] = size, i
    return sizes


def interleaved(args) -> tuple[str, list]:
    """``(spec, operands)`` for the form ``einsum(x, [0, 1], y, [1, 2], [0, 2])``.

    Arguments:
        args: operands alternating with sublists of ints (0-51) or ``...``, optionally
            followed by the output sublist.

    Returns:
        The equivalent subscripts string (``'ab,bc->ac'``) and the operands.

    Example:
        >>> interleaved(["x", [0, 1], "y", [1, 2], [0, 2]])
        ('ab,bc->ac', ['x', 'y'])
    """
    args = list(args)
    output = args.pop() if len(args) % 2 else None
    operands, sublists = args[0::2], args[1::2]
    spec = ",".join(_sublist_term(s) for s in sublists)
    if output is not None:
        spec += "->" + _sublist_term(output)
    return spec, operands


def _sublist_term(sublist) -> str:
    letters = string.ascii_letters
    term = []
    for item in sublist:
        if item is Ellipsis:
            term.append("...")
        elif isinstance(item, int) and 0 <= item < len(letters):
            term.append(letters[item])
        else:
            raise ValueError(
                f"einsum: sublist {sublist!r} may only hold ints from 0 to 51 and ..., got {item!r}"
            )
    return "".join(term)
