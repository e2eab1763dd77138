"""N1 for every primitive: ``vmap(f)(xs)[i]`` is bitwise ``f(xs[i])``.

A table binds each primitive of ``invarax.core.trace.PRIMITIVES`` through its lax (or
jnp) entry point, with a sampler for its arguments. Each case is checked bitwise against
``f`` applied one example at a time:

- at batch sizes 1, 2, 3, 7, 16, 17 (and 1000 for a few cheap cases), every example;
  the examples of a batch of ``n`` are the first ``n`` of one pool, so the results also
  do not depend on how many examples a batch holds;
- with in_axes 1 (each example a strided slice), and each argument unbatched in turn;
- under nested vmap, vmap of jit and jit of vmap, and in float64;
- for differentiable primitives, per-example gradients ``vmap(grad(loss))`` against
  ``grad(loss)`` one example at a time.

Coverage tests: every primitive is in the table or listed (with the reason) where it is
tested instead; every primitive has a batching rule or is listed (iota alone); a primitive
without a rule is an error under vmap, never a per-example loop. Last, the order of psum.
"""

import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from helpers import assert_bitwise

import invarax
import invarax.module.internal  # noqa: F401  (defines Equinox's internal primitives)
import invarax.numpy as jnp
from invarax import lax
from invarax.ad_checkpoint import checkpoint_name
from invarax.core.ir import ClosedJaxpr, Jaxpr
from invarax.core.trace import PRIMITIVES, Primitive
from invarax.interpreters.batching import batching_rules
from invarax.ops.fused import fma
from invarax.ops.gamma import betainc, digamma_p, igamma, igamma_grad_a_p, igammac, lgamma
from invarax.ops.special import erf, erf_inv_p, erfc
from invarax.ops.windowed import select_and_gather_add_p, select_and_scatter_add_p

BATCHES = (1, 2, 3, 7, 16, 17)


@dataclass(frozen=True)
class Arg:
    """One argument of a case: its per-example shape and how its values are drawn."""

    shape: tuple
    kind: str = "f"  # f: normal, u: uniform [lo, hi), s: ties/NaN/inf/-0, i: ints, b, c
    lo: float = 0
    hi: float = 0

    @property
    def is_float(self):
        return self.kind in "fus"

    def draw(self, lead, rng, dtype=np.float32):
        shape = (*lead, *self.shape)
        if self.kind == "u":
            return rng.uniform(self.lo, self.hi, shape).astype(dtype)
        if self.kind == "s":
            choices = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf], dtype)
            return rng.choice(choices, shape)
        if self.kind == "i":
            return rng.integers(self.lo, self.hi, shape).astype(np.int32)
        if self.kind == "b":
            return rng.random(shape) < 0.5
        if self.kind == "c":
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
                np.complex64)
        return rng.standard_normal(shape).astype(dtype)


def F(*shape):
    return Arg(shape)


def U(lo, hi, *shape):
    return Arg(shape, "u", lo, hi)


def S(*shape):
    return Arg(shape, "s")


def I(lo, hi, *shape):  # noqa: E743
    return Arg(shape, "i", lo, hi)


def B(*shape):
    return Arg(shape, "b")


def Z(*shape):
    return Arg(shape, "c")


@dataclass(frozen=True)
class Case:
    prim: str  # the primitive the case binds
    f: object
    args: list
    diff: bool = True  # per-example gradients with respect to the float arguments


def case(prim, f, *args, diff=True):
    return Case(prim, f, list(args), diff)


def unary(prim, f, arg=None, diff=True):
    return case(prim, f, arg or F(3, 4), diff=diff)


def binary(prim, f, a=None, b=None, diff=True):
    return case(prim, f, a or F(3, 4), b or F(3, 4), diff=diff)


@invarax.jit
def jitted(x, y):
    return jnp.sin(x) * y + x


def _sum_rows(x):
    return lax.reduce_sum(x, (1,))


DN = (((1,), (0,)), ((), ()))  # a plain matrix product
DN_BATCH = (((2,), (1,)), ((0,), (0,)))  # a batched one
DN_VEC = (((0,), (0,)), ((), ()))  # a vector-matrix product

WINDOW = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)),
              base_dilation=(1, 1), window_dilation=(1, 1))

CASES = {
    # elementwise, unary
    "abs": unary("abs", lax.abs),
    "acos": unary("acos", lax.acos, U(-0.9, 0.9, 3, 4)),
    "acosh": unary("acosh", lax.acosh, U(1.1, 4, 3, 4)),
    "asin": unary("asin", lax.asin, U(-0.9, 0.9, 3, 4)),
    "asinh": unary("asinh", lax.asinh),
    "atan": unary("atan", lax.atan),
    "atanh": unary("atanh", lax.atanh, U(-0.9, 0.9, 3, 4)),
    "cbrt": unary("cbrt", lax.cbrt),
    "ceil": unary("ceil", lax.ceil),
    "cos": unary("cos", lax.cos),
    "cosh": unary("cosh", lax.cosh),
    "exp": unary("exp", lax.exp),
    "exp2": unary("exp2", lax.exp2),
    "expm1": unary("expm1", lax.expm1),
    "floor": unary("floor", lax.floor),
    "is_finite": unary("is_finite", lax.is_finite, S(3, 4), diff=False),
    "log": unary("log", lax.log, U(0.1, 5, 3, 4)),
    "log1p": unary("log1p", lax.log1p, U(-0.9, 5, 3, 4)),
    "log2": unary("log2", jnp.log2, U(0.1, 5, 3, 4)),
    "log10": unary("log10", jnp.log10, U(0.1, 5, 3, 4)),
    "logistic": unary("logistic", lax.logistic),
    "neg": unary("neg", lax.neg),
    "round": unary("round", lax.round),
    "round_even": unary("round", lambda x: lax.round(x, 1), U(-3, 3, 3, 4)),
    "rsqrt": unary("rsqrt", lax.rsqrt, U(0.1, 5, 3, 4)),
    "sign": unary("sign", lax.sign, S(3, 4)),
    "sin": unary("sin", lax.sin),
    "erf": unary("erf", erf),
    "erfc": unary("erfc", erfc),
    "erf_inv": unary("erf_inv", erf_inv_p.bind, U(-0.9, 0.9, 3, 4)),  # flag-free: bound directly
    "lgamma": unary("lgamma", lgamma, U(0.1, 5, 3, 4)),
    "digamma": unary("digamma", digamma_p.bind, U(-3, 5, 3, 4)),  # flag-free: bound directly
    "name": unary("name", lambda x: checkpoint_name(x, "n") * 2.0),
    "igamma": unary("igamma", lambda x: igamma(2.5, x), U(0.1, 5, 3, 4)),
    "igammac": unary("igammac", lambda x: igammac(0.7, x), U(0.1, 5, 3, 4)),
    "igamma_grad_a": unary("igamma_grad_a", lambda a: igamma_grad_a_p.bind(a, a * 0.7),
                           U(0.1, 5, 3, 4), diff=False),
    "betainc": unary("betainc", lambda x: betainc(2.0, 3.5, x), U(0.05, 0.95, 3, 4)),
    "sinh": unary("sinh", lax.sinh),
    "sqrt": unary("sqrt", lax.sqrt, U(0.1, 5, 3, 4)),
    "tan": unary("tan", lax.tan, U(-1.2, 1.2, 3, 4)),
    "tanh": unary("tanh", lax.tanh),
    "integer_pow": unary("integer_pow", lambda x: lax.integer_pow(x, 3)),
    "integer_pow_negative": unary("integer_pow", lambda x: lax.integer_pow(x, -2),
                                  U(0.5, 2, 3, 4)),
    "stop_gradient": unary("stop_gradient", lax.stop_gradient),
    "convert_f16": unary("convert_element_type",
                         lambda x: lax.convert_element_type(x, np.float16)),
    "convert_to_int": unary("convert_element_type",
                            lambda x: lax.convert_element_type(x * 10, np.int32), diff=False),
    "not": unary("not", lax.bitwise_not, I(-50, 50, 3, 4), diff=False),
    "not_bool": unary("not", lax.bitwise_not, B(3, 4), diff=False),
    # complex (no gradients: grad needs real inputs here)
    "real": unary("real", lax.real, Z(3, 4), diff=False),
    "imag": unary("imag", lax.imag, Z(3, 4), diff=False),
    "conj": unary("conj", lax.conj, Z(3, 4), diff=False),
    # elementwise, binary
    "add": binary("add", lax.add),
    "sub": binary("sub", lax.sub),
    "mul": binary("mul", lax.mul),
    "div": binary("div", lax.div, F(3, 4), U(0.5, 2, 3, 4)),
    "div_int": binary("div", lax.div, I(-50, 50, 3, 4), I(1, 9, 3, 4), diff=False),
    "rem": binary("rem", lax.rem, F(3, 4), U(0.5, 2, 3, 4)),
    "pow": binary("pow", lax.pow, U(0.5, 2, 3, 4)),
    "atan2": binary("atan2", lax.atan2),
    "max": binary("max", lax.max),
    "min": binary("min", lax.min),
    "max_ties": binary("max", lax.max, S(3, 4), S(3, 4), diff=False),
    "nextafter": binary("nextafter", lax.nextafter),
    "add_scalar": binary("add", lax.add, F(3, 4), F()),
    "mul_scalar_first": binary("mul", lax.mul, F(), F(3, 4)),
    "eq": binary("eq", lax.eq, S(3, 4), S(3, 4), diff=False),
    "ne": binary("ne", lax.ne, S(3, 4), S(3, 4), diff=False),
    "lt": binary("lt", lax.lt, S(3, 4), S(3, 4), diff=False),
    "le": binary("le", lax.le, S(3, 4), S(3, 4), diff=False),
    "gt": binary("gt", lax.gt, S(3, 4), S(3, 4), diff=False),
    "ge": binary("ge", lax.ge, S(3, 4), S(3, 4), diff=False),
    "and": binary("and", lax.bitwise_and, I(-50, 50, 3, 4), I(-50, 50, 3, 4), diff=False),
    "or": binary("or", lax.bitwise_or, B(3, 4), B(3, 4), diff=False),
    "xor": binary("xor", lax.bitwise_xor, I(-50, 50, 3, 4), I(-50, 50, 3, 4), diff=False),
    "shift_left": binary("shift_left", lax.shift_left, I(-50, 50, 3, 4), I(0, 40, 3, 4),
                         diff=False),
    "shift_right_logical": binary("shift_right_logical", lax.shift_right_logical,
                                  I(-50, 50, 3, 4), I(0, 40, 3, 4), diff=False),
    "select_n": case("select_n", lax.select_n, B(3, 4), F(3, 4), F(3, 4)),
    "fma": case("fma", fma, F(3, 4), F(3, 4), F(3, 4)),
    "fma_scalar": case("fma", fma, F(3, 4), F(), F(3, 4)),
    "select_n_three": case("select_n", lax.select_n, I(0, 3, 3, 4), F(3, 4), F(3, 4), F(3, 4)),
    "select_n_scalar_pred": case("select_n", lax.select_n, B(), F(3, 4), F(3, 4)),
    # reductions and scans
    "reduce_sum": unary("reduce_sum", _sum_rows, F(3, 5)),
    "reduce_sum_all": unary("reduce_sum", lambda x: lax.reduce_sum(x, (0, 1)), F(3, 5)),
    "reduce_sum_long": unary("reduce_sum", _sum_rows, F(2, 300)),  # pairwise halves
    "reduce_sum_axis0": unary("reduce_sum", lambda x: lax.reduce_sum(x, (0,)), F(20, 3)),
    "reduce_max": unary("reduce_max", lambda x: lax.reduce_max(x, (1,)), F(3, 5)),
    "reduce_max_ties": unary("reduce_max", lambda x: lax.reduce_max(x, (0,)), S(6, 3),
                             diff=False),
    "reduce_min": unary("reduce_min", lambda x: lax.reduce_min(x, (0,)), F(3, 5)),
    "reduce_prod": unary("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), F(3, 5)),
    "reduce_and": unary("reduce_and", lambda x: lax.reduce_and(x, (1,)), B(3, 2), diff=False),
    "reduce_or": unary("reduce_or", lambda x: lax.reduce_or(x, (0, 1)), B(3, 2), diff=False),
    "argmax": unary("argmax", lambda x: lax.argmax(x, 1, np.int32), S(3, 5), diff=False),
    "argmin": unary("argmin", lambda x: lax.argmin(x, 0, np.int32), S(5, 3), diff=False),
    "cumsum": unary("cumsum", lambda x: lax.cumsum(x, axis=1), F(3, 5)),
    "cumsum_reverse": unary("cumsum", lambda x: lax.cumsum(x, axis=0, reverse=True), F(5, 3)),
    "cumprod": unary("cumprod", lambda x: lax.cumprod(x, axis=1), F(3, 5)),
    "cummax": unary("cummax", lambda x: lax.cummax(x, axis=0), F(5, 3)),
    "cummin": unary("cummin", lambda x: lax.cummin(x, axis=1, reverse=True), F(3, 5)),
    "cumlogsumexp": unary("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=1), F(3, 5)),
    # contractions
    "dot_general": binary("dot_general", lambda a, b: lax.dot_general(a, b, DN),
                          F(3, 4), F(4, 5)),
    "dot_general_batch": binary("dot_general", lambda a, b: lax.dot_general(a, b, DN_BATCH),
                                F(2, 3, 4), F(2, 4, 5)),
    "dot_general_long": binary("dot_general", lambda a, b: lax.dot_general(a, b, DN),
                               F(2, 600), F(600, 2)),  # three blocks of the inner product
    "dot_general_vector": binary("dot_general", lambda a, b: lax.dot_general(a, b, DN_VEC),
                                 F(4), F(4, 3)),
    "dot_general_int": binary("dot_general", lambda a, b: lax.dot_general(a, b, DN),
                              I(-9, 9, 3, 4), I(-9, 9, 4, 2), diff=False),
    "conv": binary("conv_general_dilated", lambda x, w: lax.conv_general_dilated(
        x, w, (2, 1), ((1, 0), (1, 1)), rhs_dilation=(1, 2)), F(2, 4, 6, 5), F(3, 4, 3, 2)),
    "conv_groups": binary("conv_general_dilated", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "SAME", feature_group_count=2), F(2, 4, 7), F(6, 2, 3)),
    "reduce_window_sum": unary("reduce_window_sum", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 3), (1, 2), ((1, 0), (0, 1))), F(4, 6)),
    "reduce_window_max": unary("reduce_window_max", lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (2, 2), (2, 1), "SAME"), F(4, 6)),
    "reduce_window_min": unary("reduce_window_min", lambda x: lax.reduce_window(
        x, np.inf, lax.min, (1, 3), (1, 1), "VALID", None, (1, 2)), F(3, 7)),
    "select_and_gather_add": binary("select_and_gather_add", lambda t, x: (
        select_and_gather_add_p.bind(t, x, op="max", **WINDOW)), F(4, 6), F(4, 6)),
    "select_and_scatter_add": binary("select_and_scatter_add", lambda s, x: (
        select_and_scatter_add_p.bind(s, x, op="min", **WINDOW)), F(3, 5), F(4, 6)),
    "conv_batch_groups": binary("conv_general_dilated", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), ((0, 1),), lhs_dilation=(2,), batch_group_count=2), F(4, 3, 5), F(4, 3, 2)),
    # shape
    "broadcast_in_dim": unary("broadcast_in_dim",
                              lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), F(3, 1)),
    "broadcast_scalar": unary("broadcast_in_dim",
                              lambda x: lax.broadcast_in_dim(x, (2, 3), ()), F()),
    "concatenate": binary("concatenate", lambda x, y: lax.concatenate([x, y, x], 1),
                          F(3, 2), F(3, 4)),
    "pad": binary("pad", lambda x, v: lax.pad(x, v, [(1, 2, 1), (0, -1, 0)]), F(3, 4), F()),
    "reshape": unary("reshape", lambda x: lax.reshape(x, (4, 3))),
    "reshape_dimensions": unary("reshape", lambda x: lax.reshape(x, (12,), (1, 0))),
    "rev": unary("rev", lambda x: lax.rev(x, (1,))),
    "slice": unary("slice", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 1))),
    "squeeze": unary("squeeze", lambda x: lax.squeeze(x, (1,)), F(3, 1, 4)),
    "transpose": unary("transpose", lambda x: lax.transpose(x, (1, 0))),
    # indexing
    "dynamic_slice": binary("dynamic_slice", lambda x, s: lax.dynamic_slice(x, (s, 1), (2, 3)),
                            F(5, 4), I(-6, 6)),
    "dynamic_update_slice": case(
        "dynamic_update_slice", lambda x, u, s: lax.dynamic_update_slice(x, u, (1, s)),
        F(4, 5), F(2, 3), I(-6, 6)),
    "gather": binary("gather", lambda x, i: lax.gather(x, i, axes=(0,), mode="clip"),
                     F(5, 3), I(-2, 7, 4, 1)),
    "gather_fill": binary("gather", lambda x, i: lax.gather(x, i, axes=(1,), mode="fill",
                                                            fill_value=-1.0),
                          F(3, 4), I(-2, 6, 5, 1)),
    "scatter": case("scatter", lambda x, i, u: lax.scatter(x, i, u, axes=(0,)),
                    F(5, 3), I(0, 5, 6, 1), F(6, 3)),  # repeated indices: the last wins
    "scatter_add": case("scatter-add", lambda x, i, u: lax.scatter_add(x, i, u, axes=(0,)),
                        F(5, 3), I(0, 5, 6, 1), F(6, 3)),
    "scatter_add_drop": case(
        "scatter-add", lambda x, i, u: lax.scatter_add(x, i, u, axes=(0,), mode="drop"),
        F(4,), I(-6, 6, 8, 1), F(8,)),
    "scatter_mul": case("scatter-mul", lambda x, i, u: lax.scatter_mul(x, i, u, axes=(0,)),
                        F(5, 3), I(0, 5, 6, 1), F(6, 3)),
    "scatter_max": case("scatter-max", lambda x, i, u: lax.scatter_max(x, i, u, axes=(0,)),
                        F(5, 3), I(0, 5, 6, 1), F(6, 3)),
    "scatter_min": case("scatter-min", lambda x, i, u: lax.scatter_min(x, i, u, axes=(1,)),
                        F(3, 5), I(0, 5, 6, 1), F(6, 3)),
    # sorting
    "sort": unary("sort", lambda x: lax.sort(x, dimension=1), F(3, 6)),
    "sort_ties": unary("sort", lambda x: lax.sort(x, dimension=0), S(6, 3), diff=False),
    "sort_keys": binary("sort", lambda k, v: lax.sort((k, v), dimension=0, num_keys=1),
                        S(6, 2), F(6, 2), diff=False),
    "sort_two_operands": binary("sort", lambda k, v: lax.sort((k, v), dimension=1),
                                F(2, 6), F(2, 6)),
    "top_k": unary("top_k", lambda x: lax.top_k(x, 3)[0], F(3, 6)),
    "top_k_ties_axis0": unary("top_k", lambda x: lax.top_k(x, 4, axis=0), S(6, 3), diff=False),
    # calls
    "jit": binary("jit", jitted),
    # linear algebra and the FFT (issue 16)
    "cholesky": unary("cholesky", lambda x: lax.linalg.cholesky(x @ x.T + 4 * jnp.eye(4)),
                      F(4, 4)),
    "triangular_solve": binary(
        "triangular_solve", lambda a, b: lax.linalg.triangular_solve(
            a + 4 * jnp.eye(4), b, left_side=True, lower=True), F(4, 4), F(4, 2)),
    "triangular_solve_right": binary(
        "triangular_solve", lambda a, b: lax.linalg.triangular_solve(
            a + 4 * jnp.eye(4), b, transpose_a=True), F(4, 4), F(2, 4)),
    "lu": unary("lu", lambda x: lax.linalg.lu(x)[0], F(4, 3)),
    "qr": unary("qr", lambda x: lax.linalg.qr(x, full_matrices=False), F(5, 3)),
    "qr_raw": unary("qr_raw", lambda x: jnp.linalg.qr(x, mode="raw"), F(5, 3), diff=False),
    "eigh": unary("eigh", lax.linalg.eigh, F(4, 4)),
    "svd": unary("svd", lambda x: lax.linalg.svd(x, full_matrices=False), F(5, 3)),
    "eig": unary("eig", lambda x: lax.linalg.eig(x)[0], F(4, 4), diff=False),
    "fft": unary("fft", lambda x: lax.fft(lax.fft(x, "RFFT", (6,)), "IRFFT", (6,)), F(3, 6)),
    "fft_complex": unary("fft", lambda x: jnp.imag(lax.fft(x * (1 + 1j), "FFT", (2, 4))),
                         F(2, 4)),
}

# Cheap cases also run at a batch of 1000, every example checked.
LARGE = {"add": 1000, "sin": 1000, "reduce_sum": 1000, "dot_general": 1000, "gather": 1000,
         "cumsum": 1000, "select_n": 1000}

# Primitives tested elsewhere, with the reason (the coverage test checks this list).
NOT_IN_TABLE = {
    "pvary": "marks a value as varying over a named axis (shard_map's): against its "
             "vmap program in tests/test_sharding_types.py",
    "iota": "no operands, so never batched: vmap binds it unchanged (test_iota_under_vmap)",
    **dict.fromkeys(
        ["psum", "pmax", "pmin", "all_gather", "axis_index"],
        "a collective over a named axis: f(xs[i]) alone is an unbound-name error, so N1 "
        "takes another form there (tests/test_vmap.py)"),
    **dict.fromkeys(
        ["ppermute", "psum_scatter", "all_to_all"],
        "a collective over a named axis: N1 takes the form pmap == vmap (tests/test_pmap.py)"),
    "error_if": "a check that raises: its vmap rule is tested in tests/test_module_errors.py",
    "sharding_constraint": "the identity with a sharding, whose spec gains the batch "
                           "dimension: tests/test_sharding_jit.py",
    **dict.fromkeys(
        ["custom_jvp_call", "custom_vjp_call", "custom_lin", "checkpoint"],
        "custom derivatives and remat: tests/test_vmap_custom.py"),
    **dict.fromkeys(["cond", "scan", "while", "while_grad"],
                    "control flow: tests/test_control_flow_transforms.py (N1 per construct)"),
    "checkpointed_while": "checkpointed_while_loop's forward pass: N1 of its per-example "
                          "gradients in tests/test_checkpointed_while.py",
    **dict.fromkeys(
        ["debug_callback", "pure_callback"],
        "callbacks into Python, batched by unrolling or by vmap_method: "
        "tests/test_debug_callbacks.py"),
    "io_callback": "a callback into Python, batched by unrolling: tests/test_compat_extend.py",
    "bitcast_convert_type": "reinterprets bits (its shape follows the dtypes' widths): "
                            "vmap and jit against JAX's in tests/test_lax_more.py",
    "dce_probe": "the identity, recording jit's dead-code elimination: "
                 "tests/test_module_dce.py (vmap, jvp, grad)",
    "announce_jaxpr": "the identity, announcing each transformation it meets: "
                      "tests/test_module_announce.py",
    **dict.fromkeys(
        ["nonbatchable", "nondifferentiable_backward", "noinline", "nontraceable",
         "unvmap_all", "unvmap_any", "unvmap_max", "vprim"],
        "equinox.internal's primitives, whose vmap is their point (a guard that raises, "
        "unvmap's reduction over the batch, a function's own rule): "
        "tests/test_eqx_internal_primitives.py and tests/test_eqx_internal.py"),
}

# Primitives without a batching rule, with the reason.
NO_BATCHING_RULE = {
    "iota": "no operands: a BatchTrace only sees it with every operand unbatched, and binds "
            "it on its parent",
}


# ---------------------------------------------------------------------------------------
# Helpers


def pool(name, n, dtype=np.float32, args=None):
    """``n`` examples of each argument of case ``name`` (or of ``args``), stacked on axis 0."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [a.draw((n,), rng, dtype) for a in args or CASES[name].args]


def leaves(out):
    return [np.asarray(x) for x in invarax.tree_leaves(out)]


def one_by_one(f, examples):
    """``f`` on each example in turn (``examples``: a list of argument lists), stacked."""
    results = [leaves(f(*[jnp.asarray(a) for a in ex])) for ex in examples]
    return [np.stack(r) for r in zip(*results, strict=True)]


def rows(xs, n, axes=None):
    """The first ``n`` examples of ``xs`` (batched on axis 0), argument by argument; an
    argument with ``axes[j]`` None is example 0 for every example."""
    axes = axes or (0,) * len(xs)
    return [[x[0] if a is None else x[i] for x, a in zip(xs, axes, strict=True)]
            for i in range(n)]


def at_axes(xs, n, axes):
    """``xs[:n]`` with each batch axis moved to ``axes[j]`` and made contiguous there, so an
    example is a strided slice; an argument with axis None is example 0."""
    out = []
    for x, a in zip(xs, axes, strict=True):
        out.append(x[0] if a is None else np.ascontiguousarray(np.moveaxis(x[:n], 0, a)))
    return out


def axis1(args):
    """in_axes 1, or 0 for a scalar argument."""
    return tuple(1 if a.shape else 0 for a in args)


def assert_all_bitwise(got, want, what):
    got = leaves(got)
    assert len(got) == len(want), what
    for g, w in zip(got, want, strict=True):
        try:
            assert_bitwise(g, w)
        except AssertionError as err:
            raise AssertionError(f"{what}: {err}") from None


def loss_of(name):
    """A scalar loss of case ``name``'s float outputs (weighted by a fixed cotangent, so
    that every transpose rule sees values other than ones) and its gradient with respect to
    the float arguments."""
    c = CASES[name]
    example = [jnp.asarray(x[0]) for x in pool(name, 1)]
    outs = invarax.tree_leaves(c.f(*example))
    rng = np.random.default_rng(1)
    cts = [jnp.asarray(rng.standard_normal(o.shape).astype(o.dtype)) for o in outs]

    def loss(*args):
        total = 0.0
        for o, ct in zip(invarax.tree_leaves(c.f(*args)), cts, strict=True):
            total = total + jnp.sum(o * ct)
        return total

    argnums = tuple(j for j, a in enumerate(c.args) if a.is_float)
    return invarax.grad(loss, argnums=argnums)


def with_several_args(names):
    return [n for n in names if len(CASES[n].args) > 1]


DIFFERENTIABLE = [n for n in CASES if CASES[n].diff]


# ---------------------------------------------------------------------------------------
# N1


@pytest.mark.parametrize("name", CASES)
def test_n1_every_batch_size(name):
    f = CASES[name].f
    size = LARGE.get(name, max(BATCHES))
    xs = pool(name, size)
    want = one_by_one(f, rows(xs, size))
    for n in sorted({*BATCHES, size}):
        got = invarax.vmap(f)(*[x[:n] for x in xs])
        assert_all_bitwise(got, [w[:n] for w in want], f"batch of {n}")


def test_n1_batch_of_zero_examples():
    for name, c in CASES.items():
        xs = pool(name, 1)
        example = leaves(c.f(*[jnp.asarray(x[0]) for x in xs]))
        got = leaves(invarax.vmap(c.f)(*[x[:0] for x in xs]))
        assert [(g.shape, g.dtype) for g in got] == [((0, *e.shape), e.dtype) for e in example]


ELEMENTWISE = [n for n, c in CASES.items()
               if all(a.shape == (3, 4) for a in c.args) and c.prim not in
               ("reshape", "rev", "slice", "transpose")]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_n1_scalar_examples(name):
    """Each example a 0-d scalar: the batch is the only axis (NumPy's 0-d paths)."""
    c = CASES[name]
    args = [Arg((), a.kind, a.lo, a.hi) for a in c.args]
    xs = pool(name, 17, args=args)
    want = one_by_one(c.f, rows(xs, 17))
    assert_all_bitwise(invarax.vmap(c.f)(*xs), want, "scalar examples")
    for k in range(len(args) if len(args) > 1 else 0):
        axes = tuple(None if j == k else 0 for j in range(len(args)))
        want = one_by_one(c.f, rows(xs, 17, axes))
        got = invarax.vmap(c.f, in_axes=axes)(*at_axes(xs, 17, axes))
        assert_all_bitwise(got, want, f"scalar examples, in_axes={axes}")


@pytest.mark.parametrize("name", CASES)
def test_n1_in_axes_1_strided_examples(name):
    f, args = CASES[name].f, CASES[name].args
    xs = pool(name, 7)
    want = one_by_one(f, rows(xs, 7))
    for n in (1, 7):
        axes = axis1(args)
        got = invarax.vmap(f, in_axes=axes)(*at_axes(xs, n, axes))
        assert_all_bitwise(got, [w[:n] for w in want], f"in_axes={axes}, batch of {n}")


@pytest.mark.parametrize("name", with_several_args(CASES))
def test_n1_unbatched_arguments(name):
    """Each argument in turn unbatched (in_axes None), the others at 0 or 1 alternately."""
    f, args = CASES[name].f, CASES[name].args
    xs = pool(name, 7)
    ones = axis1(args)
    for k in range(len(args)):
        axes = tuple(None if j == k else (0, ones[j])[j % 2] for j in range(len(args)))
        want = one_by_one(f, rows(xs, 7, axes))
        got = invarax.vmap(f, in_axes=axes)(*at_axes(xs, 7, axes))
        assert_all_bitwise(got, want, f"in_axes={axes}")


@pytest.mark.parametrize("name", CASES)
def test_n1_nested_vmap(name):
    f, args = CASES[name].f, CASES[name].args
    xs = pool(name, 6)
    want = one_by_one(f, rows(xs, 6))
    # 6 examples as 2 x 3: the outer batch axis at 1 (0 for scalars), the inner at 0.
    inner = [x.reshape(2, 3, *x.shape[1:]) for x in xs]
    outer_axes = axis1(args)
    nested = [np.ascontiguousarray(np.moveaxis(x, 0, a)) for x, a in
              zip(inner, outer_axes, strict=True)]
    got = invarax.vmap(invarax.vmap(f), in_axes=outer_axes)(*nested)
    assert_all_bitwise(got, [w.reshape(2, 3, *w.shape[1:]) for w in want], "nested")


@pytest.mark.parametrize("name", CASES)
def test_n1_vmap_of_jit_and_jit_of_vmap(name):
    f = CASES[name].f
    xs = pool(name, 7)
    want = one_by_one(f, rows(xs, 7))
    assert_all_bitwise(invarax.vmap(invarax.jit(f))(*xs), want, "vmap of jit")
    assert_all_bitwise(invarax.jit(invarax.vmap(f))(*xs), want, "jit of vmap")


@pytest.mark.parametrize("name", [n for n in CASES if all(a.kind in "fusib"
                                                           for a in CASES[n].args)])
def test_n1_float64(name, x64):
    f = CASES[name].f
    xs = pool(name, 17, np.float64)
    want = one_by_one(f, rows(xs, 17))
    for n in (1, 3, 17):
        got = invarax.vmap(f)(*[x[:n] for x in xs])
        assert_all_bitwise(got, [w[:n] for w in want], f"float64, batch of {n}")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_n1_per_example_gradients(name):
    """vmap(grad(loss)) is bitwise grad(loss) one example at a time, at every batch size."""
    g = loss_of(name)
    xs = pool(name, 17)
    want = one_by_one(g, rows(xs, 17))
    for n in (1, 2, 7, 17):
        got = invarax.vmap(g)(*[x[:n] for x in xs])
        assert_all_bitwise(got, [w[:n] for w in want], f"grad, batch of {n}")


@pytest.mark.parametrize("name", with_several_args(DIFFERENTIABLE))
def test_n1_per_example_gradients_shared_argument(name):
    """The first argument shared (in_axes None, as model parameters), the others strided."""
    g = loss_of(name)
    args = CASES[name].args
    xs = pool(name, 7)
    axes = (None, *axis1(args)[1:])
    want = one_by_one(g, rows(xs, 7, axes))
    assert_all_bitwise(invarax.vmap(g, in_axes=axes)(*at_axes(xs, 7, axes)), want, "grad")


# ---------------------------------------------------------------------------------------
# Coverage: the table, the rules, and no per-example loop


def primitive_names(jaxpr):
    """The names of the primitives a jaxpr binds, those of called jaxprs included."""
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for p in eqn.params.values():
            if isinstance(p, ClosedJaxpr):
                p = p.jaxpr
            if isinstance(p, Jaxpr):
                names |= primitive_names(p)
    return names


def test_table_covers_every_primitive():
    covered = {c.prim for c in CASES.values()}
    missing = set(PRIMITIVES) - covered - set(NOT_IN_TABLE)
    assert not missing, f"add a case to CASES, or list them in NOT_IN_TABLE: {missing}"
    assert not covered & set(NOT_IN_TABLE), covered & set(NOT_IN_TABLE)
    assert set(NOT_IN_TABLE) <= set(PRIMITIVES), set(NOT_IN_TABLE) - set(PRIMITIVES)


@pytest.mark.parametrize("name", CASES)
def test_case_binds_its_primitive(name):
    example = [jnp.asarray(x[0]) for x in pool(name, 1)]
    jaxpr = invarax.make_jaxpr(CASES[name].f)(*example).jaxpr
    assert CASES[name].prim in primitive_names(jaxpr)


@pytest.mark.parametrize("name", CASES)
def test_batched_jaxpr_does_not_grow_with_the_batch(name):
    """A batching rule writes the same program for 2 examples as for 17: no loop."""
    f = CASES[name].f
    counts = []
    for n in (2, 17):
        jaxpr = invarax.make_jaxpr(invarax.vmap(f))(*pool(name, n)).jaxpr
        counts.append([e.primitive.name for e in jaxpr.eqns])
    assert counts[0] == counts[1]


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_has_a_batching_rule(name):
    prim = PRIMITIVES[name]
    if name in NO_BATCHING_RULE:
        assert prim not in batching_rules, f"{name} has a rule: remove it from NO_BATCHING_RULE"
        return
    assert prim in batching_rules, (
        f"{name} has no batching rule: write one next to the primitive (vmap has no "
        "per-example fallback), or list it in NO_BATCHING_RULE with the reason"
    )


def test_batching_rule_list_names_primitives():
    assert set(NO_BATCHING_RULE) <= set(PRIMITIVES), set(NO_BATCHING_RULE) - set(PRIMITIVES)


def test_a_primitive_without_a_rule_is_an_error_not_a_loop():
    prim = Primitive("vmap_test_primitive_without_rule")
    calls = []
    try:
        prim.def_impl(lambda x: calls.append(x.shape) or -x)
        prim.def_abstract_eval(lambda x: x)
        assert prim.bind(jnp.ones(2)).tolist() == [-1.0, -1.0] and calls == [(2,)]
        for f in (prim.bind, invarax.jit(prim.bind)):
            with pytest.raises(NotImplementedError,
                               match="batching rule for 'vmap_test_primitive_without_rule'"):
                invarax.vmap(f)(jnp.ones((3, 2)))
        assert calls == [(2,)]  # vmap ran no example by itself
        # With no batched operand there is nothing to batch: it is bound as it is.
        out = invarax.vmap(lambda x: prim.bind(jnp.ones(2)) + x)(jnp.ones((3, 2)))
        assert out.shape == (3, 2) and calls == [(2,), (2,)]
    finally:
        del PRIMITIVES[prim.name]


def test_iota_under_vmap():
    f = lambda x: x * lax.iota(np.float32, 4) + lax.convert_element_type(
        lax.broadcasted_iota(np.int32, (4,), 0), np.float32)
    xs = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert_bitwise(invarax.vmap(f)(xs), np.stack([f(jnp.asarray(x)) for x in xs]))
    assert "iota" in primitive_names(invarax.make_jaxpr(invarax.vmap(f))(xs).jaxpr)


# ---------------------------------------------------------------------------------------
# N1 gaps found by this table, reported (strict xfails: they pass when fixed)


@pytest.mark.parametrize("exponent", [0.5, -1.0, 2.0])
def test_n1_pow_with_scalar_exponents(exponent):
    # NumPy's power has shortcuts for a broadcast exponent of 0.5, -1 or 2 (pow(3, 0.5) was
    # 1.7320508 one at a time, 1.7320509 batched); the pow impl always takes the general loop.
    xs = np.float32([3.0, 1e30, -0.0, -np.inf])
    ys = np.full(4, exponent, np.float32)
    want = np.stack([lax.pow(jnp.asarray(x), jnp.asarray(y)) for x, y in zip(xs, ys,
                                                                            strict=True)])
    assert_bitwise(invarax.vmap(lax.pow)(xs, ys), want)


def test_n1_nan_is_nan_but_its_sign_is_not_promised():
    # docs/numerics.md: NaN results are NaN wherever they are computed, but the sign and
    # payload of a NaN are outside the contract (NumPy's add returns one operand's NaN or the
    # other's depending on the element's position in its loop).
    xs = np.full(17, np.nan, np.float32)
    ys = -xs
    want = np.stack([lax.add(jnp.asarray(x), jnp.asarray(y)) for x, y in zip(xs, ys,
                                                                            strict=True)])
    assert np.isnan(np.asarray(invarax.vmap(lax.add)(xs, ys))).all() and np.isnan(want).all()


# ---------------------------------------------------------------------------------------
# psum's order (docs/numerics.md): the canonical sum over the batch axis


@pytest.mark.parametrize("n", [1, 7, 17, 1000])
def test_psum_is_the_canonical_sum_whatever_the_in_axes(n):
    xs = np.random.default_rng(n).standard_normal((3, n, 5)).astype(np.float32)
    want = jnp.sum(xs, axis=1)
    psum = lambda v: lax.psum(v, "i")
    assert_bitwise(invarax.vmap(psum, in_axes=1, axis_name="i")(xs)[n - 1], want)
    assert_bitwise(invarax.vmap(psum, in_axes=0, axis_name="i")(np.moveaxis(xs, 1, 0))[0], want)


@pytest.mark.parametrize("n", [3, 7, 100, 1000])
def test_psum_of_an_unbatched_value_sums_its_copies(n):
    """A value the same in every example (in_axes None) gives the bits of its n copies
    passed batched: the copies summed in the canonical order, not ``x * n``."""
    w = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    f = lambda _, v: lax.psum(v, "i")
    shared = invarax.vmap(f, in_axes=(0, None), axis_name="i")(np.zeros(n), w)
    copies = invarax.vmap(f, axis_name="i")(np.zeros(n), np.stack([w] * n))
    assert_bitwise(shared, copies)
    assert_bitwise(shared[0], jnp.sum(np.stack([w] * n), axis=0))


def test_psum_over_two_names_sums_the_inner_axis_first():
    x = np.random.default_rng(0).standard_normal((8, 5, 3)).astype(np.float32)
    want = jnp.sum(jnp.sum(x, axis=1), axis=0)
    for names in (("i", "j"), ("j", "i")):
        f = lambda v, names=names: lax.psum(v, names)
        out = invarax.vmap(invarax.vmap(f, axis_name="j"), axis_name="i")(x)
        assert_bitwise(out[3, 4], want)
