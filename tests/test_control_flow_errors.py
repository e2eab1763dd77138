"""Bad input to cond, switch, while_loop, fori_loop, scan and map: a clear error naming the
pytree path, both types and the fix; never a NumPy traceback. And the tracer-to-bool
error's advice names only functions that exist."""

import re

import pytest

import invarax
import invarax.numpy as jnp
from invarax import jit, lax


def test_branches_returning_different_types():
    with pytest.raises(TypeError, match=r"false_fun and true_fun output must have identical "
                                        r"types, but the output\[1\] is float32\[3\] in "
                                        r"false_fun and int32\[3\] in true_fun"):
        lax.cond(True, lambda x: (x, x.astype(jnp.int32)), lambda x: (x, x), jnp.ones(3))
    with pytest.raises(TypeError, match="must return the same pytree structure"):
        lax.cond(True, lambda x: (x, x), lambda x: [x, x], jnp.ones(3))
    with pytest.raises(TypeError, match=r"branches\[0\] and branches\[2\] output must have "
                                        r"identical types.*float32\[\] .*float32\[2\]"):
        lax.switch(1, [lambda x: x, lambda x: x, lambda x: jnp.stack([x, x])], 1.0)


def test_body_changing_the_carry():
    with pytest.raises(TypeError, match=r"input carry component carry\['h'\] has type "
                                        r"float32\[3\] and the corresponding output component "
                                        r"has type float32\[4\], so the shapes differ"):
        lax.scan(lambda c, x: ({"h": jnp.ones(4)}, x), {"h": jnp.ones(3)}, jnp.ones((2, 1)))
    with pytest.raises(TypeError, match=r"init_val\[1\] has type int32\[\] .*float32\[\].*"
                                        r"dtypes differ.*astype"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5),
                       (0, jnp.int32(1)))
    with pytest.raises(TypeError, match="same pytree structure.*Return the new carry"):
        lax.scan(lambda c, x: ((c, c), x), jnp.ones(()), jnp.ones(2))
    with pytest.raises(TypeError, match="must return a pair"):
        lax.scan(lambda c, x: c, jnp.ones(()), jnp.ones(2))
    with pytest.raises(TypeError, match=r"carry\[1\] has type float32\[2\]"):
        lax.fori_loop(0, 3, lambda i, c: jnp.ones(3), jnp.ones(2))


def test_scan_lengths():
    with pytest.raises(ValueError, match=r"different leading axis sizes: xs\['a'\] has 3, "
                                         r"xs\['b'\] has 4"):
        lax.scan(lambda c, x: (c, None), 0.0, {"a": jnp.ones(3), "b": jnp.ones(4)})
    with pytest.raises(ValueError, match="`length` argument of 5 which disagrees with leading "
                                         r"axis sizes \[3\]"):
        lax.scan(lambda c, x: (c, None), 0.0, jnp.ones(3), length=5)
    with pytest.raises(ValueError, match="no values to scan over and `length` not provided"):
        lax.scan(lambda c, x: (c, None), 0.0)
    with pytest.raises(ValueError, match=r"no leading axis to scan over: xs\[0\] of shape"):
        lax.scan(lambda c, x: (c, None), 0.0, (jnp.float32(1.0),))
    with pytest.raises(TypeError, match=r"xs\[0\]"):
        lax.scan(lambda c, x: (c, None), 0.0, ["not an array"])


def test_predicates():
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got float32\[3\].*jnp.any"):
        lax.cond(jnp.ones(3), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got "
                                        r"output type\(s\) \['int32\[\]"):
        lax.while_loop(lambda x: x, lambda x: x - 1, 3)
    with pytest.raises(TypeError, match=r"boolean scalar.*bool\[2\]"):
        lax.while_loop(lambda x: x < 3, lambda x: x + 1, jnp.zeros(2))
    with pytest.raises(TypeError, match="Branch index must be scalar"):
        lax.switch(jnp.zeros(2, jnp.int32), [lambda: 1.0, lambda: 2.0])
    with pytest.raises(TypeError, match="Index type must be an integer, got float32"):
        lax.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [])


def test_fori_loop_float_bound():
    with pytest.raises(TypeError, match=r"fori_loop upper bound must be an integer scalar, got "
                                        r"float32\[\].*int\(n\)"):
        lax.fori_loop(0, 3.0, lambda i, x: x, 0.0)
    with pytest.raises(TypeError, match="fori_loop lower bound"):
        jit(lambda lo: lax.fori_loop(lo, 3, lambda i, x: x, 0.0))(1.5)


def test_tracer_bool_error_recommends_functions_that_exist():
    with pytest.raises(invarax.TracerBoolConversionError) as info:
        jit(lambda x: 1.0 if x > 0 else 2.0)(1.0)
    named = set(re.findall(r"lax\.(\w+)", str(info.value)))
    assert {"cond", "switch", "while_loop", "fori_loop", "scan"} <= named
    for name in named:
        assert hasattr(lax, name), name
    assert all(hasattr(jnp, n) for n in re.findall(r"jnp\.(\w+)", str(info.value)))
