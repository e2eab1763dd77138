"""The lowering table (``invarax/core/lowering.py``): the compiler reads it and names no
primitive; its rules as data."""

import ast
import pathlib

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax.core.lowering import LOWERINGS, Lowering, lowering, register_lowering
from invarax.core.trace import PRIMITIVES, Primitive
from invarax.ops import elementwise as ew
from invarax.ops.contractions import dot_general_p
from invarax.ops.reductions import reduce_or_p, reduce_sum_p
from invarax.ops.shape import broadcast_in_dim_p, pad_p, transpose_p

COMPILER = pathlib.Path(invarax.__file__).parent / "compiler"


def _violations(path: pathlib.Path) -> list:
    """What ``path`` does that names a primitive: imports from ``ops`` or of a ``*_p`` name
    from outside the compiler, comparisons of a ``.name`` with a string literal."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "ops" or module.startswith(("ops.", "invarax.ops")) or (
                    node.level and module.split(".")[0] == "ops"):
                found.append(f"line {node.lineno}: imports from {module}")
            own = node.level == 1  # the compiler's own primitive (``jit_p``, in call.py)
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names
                      if a.name.endswith("_p") and not own]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names
                      if ".ops" in a.name]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            names = any(isinstance(s, ast.Attribute) and s.attr == "name" for s in sides)
            strings = any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                          for s in sides for c in ast.walk(s))
            if names and strings:
                found.append(f"line {node.lineno}: compares a .name with a string")
    return found


@pytest.mark.parametrize("path", sorted(COMPILER.glob("*.py")), ids=lambda p: p.name)
def test_the_compiler_names_no_primitive(path):
    assert _violations(path) == [], (
        f"{path.name} names primitives; read the lowering table (core/lowering.py) instead")


def test_the_scan_finds_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from ..ops.shape import pad_p\nfrom ..ops import elementwise\n"
                   "import invarax.ops.shape\n"
                   "def f(e):\n    return e.primitive.name == 'transpose' or "
                   "e.primitive.name in ('a', 'b')\n")
    assert len(_violations(bad)) == 6


def test_rules_are_data():
    add = lowering(ew.add_p)
    assert add.fusible and add.c == ("arith", "+") and add.operator == "+"
    assert add.sums_pieces and add.impl is ew.add_p.impl
    assert lowering(ew.div_p).kernel(np.dtype(np.float32)) is np.divide
    assert lowering(ew.div_p).kernel(np.dtype(np.int32)) is not np.divide
    assert lowering(ew.exp_p).kernel(np.dtype(np.float32)) is ew.exp_p.impl
    assert lowering(reduce_sum_p).row_reduction and lowering(reduce_sum_p).c_fold is None
    assert lowering(reduce_or_p).c_fold == ("0", "|=")
    assert lowering(broadcast_in_dim_p).scalar_broadcast
    assert lowering(transpose_p).permutation({"permutation": (1, 0)}) == (1, 0)
    assert lowering(pad_p).pad_piece is not None
    dot = lowering(dot_general_p)
    assert dot.prepare and dot.absorb_transpose and dot.stacked
    assert not lowering(ew.stop_gradient_p).fusible
    assert lowering(ew.stop_gradient_p).c == ("identity",)


@pytest.fixture
def scratch_primitive():
    """A primitive for one test, unregistered after it (other tests list every primitive)."""
    made = []

    def make(name):
        made.append(Primitive(name))
        return made[-1]

    yield make
    for prim in made:
        del PRIMITIVES[prim.name]


def test_an_unregistered_primitive_runs_its_impl_on_cpu_only(scratch_primitive):
    prim = scratch_primitive("lowering_test_unregistered")
    prim.def_impl(lambda x: x + 1)
    prim.def_abstract_eval(lambda x: x)
    rule = lowering(prim)
    assert rule == Lowering(impl=prim.impl) and prim not in LOWERINGS["cpu"]
    with pytest.raises(NotImplementedError, match="register_lowering"):
        lowering(prim, "another")
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(invarax.jit(prim.bind)(x), x + 1)


def test_a_platform_has_its_own_rules(scratch_primitive):
    prim = scratch_primitive("lowering_test_platform")
    prim.def_impl(lambda x: x)
    prim.def_abstract_eval(lambda x: x)
    rule = register_lowering(prim, platform="lowering_test", impl=np.negative, fusible=True)
    try:
        assert lowering(prim, "lowering_test") is rule and rule.impl is np.negative
        assert prim not in LOWERINGS["cpu"] and not lowering(prim).fusible
    finally:
        del LOWERINGS["lowering_test"]


def test_jit_reads_the_table():
    # The fused program names the primitives' kernels, found through the table.
    x = jnp.ones(2**21, jnp.float32)
    f = invarax.jit(lambda x: jnp.exp(x) * 2.0 + x)
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(jnp.exp(x) * 2.0 + x))


def test_docstring_examples():
    import doctest

    import invarax.core.lowering
    import invarax.ops.arithmetic

    globs = {"np": np, "grad": invarax.grad, "stop_gradient": ew.stop_gradient}
    for module in (invarax.core.lowering, invarax.ops.arithmetic):
        result = doctest.testmod(module, extraglobs=globs)
        assert result.failed == 0 and result.attempted > 0, module.__name__
