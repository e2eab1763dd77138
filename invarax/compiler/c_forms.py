"""Per-element C forms: the C expression of an elementwise equation, from the ``c`` field
of its lowering (``core/lowering.py``), shared by the native loops (``native.py``) and the
native fusion groups (``fusion_native.py``).

Each expression gives exactly the bits NumPy's ufunc gives (``native.py`` states the rules:
IEEE operations in the operands' precision, no FMA, NumPy's NaN choices, wrapping
integers, saturating conversions). ``PRELUDE`` defines the helpers the expressions use.
"""

from __future__ import annotations

import numpy as np

from ..core.lowering import lowering

CTYPES = {"float32": "float", "float64": "double", "bool": "uint8_t",
           **{f"int{b}": f"int{b}_t" for b in (8, 16, 32, 64)},
           **{f"uint{b}": f"uint{b}_t" for b in (8, 16, 32, 64)}}

PRELUDE = r"""#include <stdint.h>
#include <string.h>
#include <math.h>
static inline float f32_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline double f64_bits(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
#define ARITH(T, N, op) static inline T N(T a, T b) { T r = a op b; \
    if (__builtin_expect(r != r, 0) && a != a) r = a op a; return r; }
ARITH(float, add_f, +) ARITH(float, sub_f, -) ARITH(float, mul_f, *) ARITH(float, div_f, /)
ARITH(double, add_d, +) ARITH(double, sub_d, -) ARITH(double, mul_d, *) ARITH(double, div_d, /)
#define NAN_FIRST(a, b, op) ((a) op ((a) != (a) ? (a) : (b)))
#define FMAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define FMIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define WRAP(T, a, op, b) ((T)((uint64_t)(a) op (uint64_t)(b)))
/* C99's nextafter on the bits (a NaN operand gives it quieted, y first, as NumPy's; from a
 * zero the smallest subnormal of y's sign; an infinity or the largest value steps by one) */
#define NEXTAFTER(T, U, N, BITS) static inline T N(T x, T y) { U u; \
    if (y != y) return y + y; if (x != x) return x + x; if (x == y) return y; \
    if (x == 0) { u = (U)1 | (y < 0 ? (U)1 << (BITS - 1) : 0); memcpy(&x, &u, sizeof x); \
        return x; } \
    memcpy(&u, &x, sizeof u); u = (x < y) == (x > 0) ? u + 1 : u - 1; \
    memcpy(&x, &u, sizeof x); return x; }
NEXTAFTER(float, uint32_t, nextafter_f, 32) NEXTAFTER(double, uint64_t, nextafter_d, 64)
/* lax.round: half away from zero (the impl's trunc(x) + sign(x) where |x - trunc(x)| >=
 * 1/2) or half to even (rint in the default rounding mode); a NaN quieted */
#define ROUND_AWAY(T, x, TRUNC, FABS) ((x) != (x) ? (x) + (x) \
    : FABS((x) - TRUNC(x)) >= (T)0.5 ? TRUNC(x) + ((x) > 0 ? (T)1 : (T)-1) : TRUNC(x))
"""

# The prelude's functions of the float operators of the "arith" form.
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}


class Unsupported(Exception):
    """The body holds something the native path does not compute."""


def ctype(aval) -> str:
    name = np.dtype(aval.dtype).name
    if name not in CTYPES:
        raise Unsupported(f"dtype {name}")
    return CTYPES[name]


def literal(v) -> str:
    """A C expression of exactly the literal's value."""
    val = np.asarray(v.val._value).reshape(())
    dt = val.dtype
    if dt == np.float32:
        return f"f32_bits(0x{int(val.view(np.uint32)):08x}u)"
    if dt == np.float64:
        return f"f64_bits(0x{int(val.view(np.uint64)):016x}ull)"
    if dt == np.bool_:
        return "1" if val else "0"
    ctype(v.aval)  # an integer by its two's complement bits (INT64_MIN has no literal)
    return f"(({CTYPES[dt.name]})0x{int(val) & 0xFFFFFFFFFFFFFFFF:x}ull)"


def expr(eqn, args, vector=False) -> str:
    """The C expression computing ``eqn`` (one 0-d output) from the C expressions ``args``,
    by the per-element C form of its lowering (``core/lowering.py``).

    Float arithmetic keeps the first operand's NaN as NumPy does: on 0-d values by a
    predicted branch after the operation (off the critical path of a scalar loop), in an
    array loop (``vector``) by a select of the second operand (vectorizes cheaper)."""
    form, *sym = lowering(eqn.primitive).c or ("",)
    op = sym[0] if sym else None
    ins = [v.aval for v in eqn.invars]
    out = eqn.outvars[0].aval
    kind = np.dtype(ins[0].dtype).kind if ins else "f"
    t = ctype(out)
    if form == "arith":
        a, b = args
        if kind == "f":
            return (f"NAN_FIRST({a}, {b}, {op})" if vector else
                    f"{_ARITH[op]}_{t[0]}({a}, {b})")
        if kind in "iu" and op != "/":
            return f"WRAP({t}, {a}, {op}, {b})"
        if kind in "iu":  # C's truncating division; by 0 it is 0, by -1 it wraps (no trap)
            minus_one = "" if kind == "u" else f"{b} == -1 ? WRAP({t}, 0, -, {a}) : "
            return f"({b} == 0 ? ({t})0 : {minus_one}({t})({a} / {b}))"
    elif form == "compare":
        return f"(uint8_t)({args[0]} {op} {args[1]})"
    elif form == "extremum":
        a, b = args
        if kind == "f":
            return f"{'FMAX' if op == '>' else 'FMIN'}({a}, {b})"
        return f"({a} {op} {b} ? {a} : {b})"
    elif form == "bitwise" and kind in "iub":
        return f"({t})({args[0]} {op} {args[1]})"
    elif form == "shift" and kind in "iu":  # XLA's: an amount of the width or more gives 0
        u = f"uint{8 * np.dtype(out.dtype).itemsize}_t"
        bits = 8 * np.dtype(out.dtype).itemsize
        return (f"(({u}){args[1]} < {bits} ? ({t})({u})(({u}){args[0]} {op} ({u}){args[1]}) "
                f": ({t})0)")
    elif form == "fma" and kind == "f":  # one rounding: C99's fma, correctly rounded
        return f"{'fmaf' if t == 'float' else 'fma'}({args[0]}, {args[1]}, {args[2]})"
    elif form == "sign" and kind in "fiu":  # NumPy's: +-1, +0 at both zeros, NaN kept
        a = args[0]
        if kind == "f":
            return f"({a} > 0 ? ({t})1 : {a} < 0 ? ({t})-1 : {a} == 0 ? ({t})0 : {a})"
        return f"({t})({a} > 0)" if kind == "u" else f"({t})(({a} > 0) - ({a} < 0))"
    elif form == "rem" and kind in "iu":  # an integer remainder by 0 or -1 is 0
        a, b = args
        zero = f"{b} == 0" if kind == "u" else f"{b} == 0 || {b} == -1"
        return f"({zero} ? ({t})0 : ({t})({a} % {b}))"
    elif form == "not" and kind in "iub":
        return f"(uint8_t)!{args[0]}" if kind == "b" else f"({t})~{args[0]}"
    elif form == "neg" and kind in "fiu":
        return f"(-{args[0]})" if kind == "f" else f"WRAP({t}, 0, -, {args[0]})"
    elif form == "abs" and kind in "fiu":
        a = args[0]
        if kind == "f":
            return f"{'fabsf' if t == 'float' else 'fabs'}({a})"
        return a if kind == "u" else f"({a} < 0 ? WRAP({t}, 0, -, {a}) : {a})"
    elif form == "quiet" and kind == "f":  # a NaN quieted, as NumPy's
        return f"({args[0]} != {args[0]} ? {args[0]} + {args[0]} : " \
               f"{op}{'f' if t == 'float' else ''}({args[0]}))"
    elif form == "rsqrt" and kind == "f":  # one over the square root, as NumPy's two ufuncs
        f = "f" if t == "float" else ""
        return f"({args[0]} != {args[0]} ? {args[0]} + {args[0]} : ({t})1 / sqrt{f}({args[0]}))"
    elif form == "round" and kind == "f":
        f = "f" if t == "float" else ""
        if eqn.params["rounding_method"] == 1:
            return f"({args[0]} != {args[0]} ? {args[0]} + {args[0]} : rint{f}({args[0]}))"
        return f"ROUND_AWAY({t}, {args[0]}, trunc{f}, fabs{f})"
    elif form == "nextafter" and kind == "f":
        return f"nextafter_{t[0]}({args[0]}, {args[1]})"
    elif form == "is_finite" and kind == "f":
        return f"(uint8_t)(isfinite({args[0]}) != 0)"
    elif form == "select":
        return _select(ins[0], args)
    elif form == "convert":
        return _convert(ins[0], out, args[0])
    elif form == "integer_pow" and kind in "fiu":
        return _integer_pow(kind, t, args[0], eqn.params["y"], vector)
    elif form == "identity" and ins[0] == out:
        return args[0]
    raise Unsupported(f"{eqn.primitive} of {[a.str_short() for a in ins]}")


def _select(which, args) -> str:
    p, cases = args[0], args[1:]
    if len(cases) == 1:
        return cases[0]
    if np.dtype(which.dtype) == np.bool_:
        return f"({p} ? {cases[1]} : {cases[0]})"
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):  # np.choose(mode="clip")
        expr = f"({p} <= {k} ? {cases[k]} : {expr})"
    return expr


def _convert(src, dst, a) -> str:
    sk, dk = np.dtype(src.dtype).kind, np.dtype(dst.dtype).kind
    t = CTYPES[np.dtype(dst.dtype).name]
    if dk == "b":
        return f"(uint8_t)({a} != 0)"
    if sk == "b":
        return f"({t})({a} != 0)"
    if sk == "f" and dk in "iu":  # truncate, saturate, NaN -> 0 (the impl's rule)
        info = np.iinfo(np.dtype(dst.dtype))
        tr = f"{'truncf' if ctype(src) == 'float' else 'trunc'}({a})"
        high = f"0x1p{info.bits - (dk == 'i')}"
        low, low_val = (f"-0x1p{info.bits - 1}", f"(-{info.max}ll - 1)") if dk == "i" else (
            "0.0", "0")
        return (f"({a} != {a} ? ({t})0 : {tr} >= {high} ? ({t}){info.max}ull : "
                f"{tr} < {low} ? ({t}){low_val} : ({t}){tr})")
    if dk in "iu" and sk in "iu":
        return f"({t})(uint64_t){a}"
    return f"({t}){a}"


def _integer_pow(kind, t, a, y, vector) -> str:
    if y == 0:
        return f"({t})1"
    def mul(p, q):
        if kind != "f":
            return f"WRAP({t}, {p}, *, {q})"
        return f"NAN_FIRST({p}, {q}, *)" if vector else f"mul_{t[0]}({p}, {q})"

    acc, base, n = None, a, -y if y < 0 else y
    while n:  # the order of integer_pow's impl
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    if y < 0:
        return f"NAN_FIRST(({t})1, {acc}, /)" if vector else f"div_{t[0]}(({t})1, {acc})"
    return acc
