"""Why a jitted function was traced again: each trace's key in words (``Signature``), the
explanation logged under ``jax_explain_cache_misses``, and the text of a ``RetraceWarning``."""

from __future__ import annotations

from ..core import dtypes
from ..core.array import Array, concrete_scalar, is_python_scalar
from ..core.aval import ShapedArray
from ..core.pytree import keystr, tree_flatten_with_path


def _leaf_str(leaf) -> str:
    """The abstract value a leaf is traced as, ``f32[3]`` (``{weak}`` for Python scalars)."""
    if isinstance(leaf, Array):
        aval = leaf.aval
    elif is_python_scalar(leaf):
        aval = concrete_scalar(leaf).aval
    elif hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        aval = ShapedArray(leaf.shape, dtypes.canonicalize(leaf.dtype))
    else:
        return f"{type(leaf).__name__} {leaf!r:.40}"
    return aval.str_short() + ("{weak}" if aval.weak_type else "")


class Signature:
    """What one call's cache key was made of, argument by argument, in words.

    ``args`` maps an argument's name to ``(structure, {path: description})``: a static
    argument has the structure ``"static"`` and one entry, its value; ``flags`` are the
    traced config flags and their values, of the ``Jitted`` function ``jitted``.
    """

    def __init__(self, jitted, args, kwargs, flags: tuple):
        self.flags = dict(flags)
        self.args = {}
        n = len(args)
        static_pos = {i % n for i in jitted.static.argnums if -n <= i < n}
        named = [(jitted._arg_name(i), a, i in static_pos) for i, a in enumerate(args)]
        named += [(k, v, k in jitted.static.argnames) for k, v in sorted(kwargs.items())]
        for name, value, is_static in named:
            if is_static:
                self.args[name] = ("static", {name: f"static {value!r:.60}"})
            else:
                leaves, tree = tree_flatten_with_path(value)
                self.args[name] = (tree, {name + keystr(p): _leaf_str(x) for p, x in leaves})

    def differences(self, other: Signature) -> list:
        """How this signature differs from ``other`` (an earlier one), one line each."""
        out = []
        for flag, value in self.flags.items():
            if other.flags.get(flag) != value:
                out.append(f"config {flag} changed: {other.flags.get(flag)} -> {value}")
        for name in sorted(self.args.keys() | other.args.keys()):
            if name not in self.args or name not in other.args:
                state = "is new" if name in self.args else "is no longer passed"
                out.append(f"argument {name} {state}")
                continue
            (tree, leaves), (old_tree, old_leaves) = self.args[name], other.args[name]
            if tree != old_tree:
                out.append(f"argument {name} changed tree structure: {old_tree} -> {tree}")
                continue
            for path, desc in leaves.items():
                old = old_leaves[path]
                if desc != old:
                    out.append(f"argument {path} changed: {old} -> {desc}{_how(old, desc)}")
        return out

    def explain(self, previous: list, name: str) -> str:
        """The log message of a cache miss, against the closest of ``previous``."""
        head = f"TRACING CACHE MISS for jit of {name}"
        if not previous:
            return f"{head}: first trace (never seen function)"
        closest = min((self.differences(p) for p in reversed(previous)), key=len)
        lines = closest or ["the key differs in a way not shown here"]
        return (f"{head} (trace {len(previous) + 1}; {len(previous)} signatures cached), "
                "because against the closest cached signature:\n  " + "\n  ".join(lines))


def _how(old: str, new: str) -> str:
    """What changed between two leaf descriptions: ``" (shape)"``, ``" (dtype)"``, ..."""
    old, new = old.removesuffix("{weak}"), new.removesuffix("{weak}")
    if "[" not in old or "[" not in new:
        return ""
    if old == new:
        return " (weak type: a Python scalar is weakly typed, an array is not)"
    (old_dtype, old_shape), (dtype, shape) = old.split("[", 1), new.split("[", 1)
    if old_dtype == dtype:
        return " (shape)"
    return " (dtype)" if old_shape == shape else " (dtype and shape)"


def varying(signature: Signature):
    """``(path, kind, description)`` for each leaf: ``kind`` names what may vary without
    bound: the sizes of an array of one dtype and rank (``f32[_,_]``), or a static value."""
    for _, leaves in signature.args.values():
        for path, desc in leaves.items():
            if desc.startswith("static"):
                yield path, "static", desc
            elif "[" in desc:
                head, dims = desc.split("[", 1)
                dims = dims.split("]")[0]
                rank = dims.count(",") + 1 if dims else 0
                yield path, f"{head}[{','.join('_' * rank)}]", desc


def retrace_warning(path: str, kind: str, values: list, name: str, traces: int) -> str:
    """The text of the RetraceWarning: which argument keeps changing, and the fixes."""
    if kind == "static":
        values = [v.removeprefix("static ") for v in values]
    shown = ", ".join(values[:5]) + (", ..." if len(values) > 5 else "")
    if kind == "static":
        what = f"static argument {path} took {len(values)} values ({shown})"
        fix = ("make it a traced array argument (remove it from static_argnums/"
               "static_argnames) if the function does not need its Python value")
    else:
        what = f"argument {path} came in {len(values)} shapes ({shown})"
        fix = ("pad it to a few fixed sizes (bucketing) so that each size is traced once, "
               "or keep the varying size out of the traced function")
    return (f"jit of {name} has been traced {traces} times: {what}. Each new signature "
            f"costs a trace and a compile; {fix}. Set "
            "config.update('jax_explain_cache_misses', True) to log every retrace.")
