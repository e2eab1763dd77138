"""Native loops: a ``scan`` or ``while`` whose body is scalar arithmetic, compiled to C.

A loop body (after ``jit``'s passes) whose every equation is in ``_OPS`` and whose every
value is 0-d (the ``xs`` and ``ys`` of a ``scan``: one element per iteration) is written
as one C function running the whole loop, compiled with the C compiler that built
Python's extensions (``sysconfig``'s ``CC``, or the ``CC`` environment variable) with
``-O2 -ffp-contract=off`` (no fused multiply-add, never fast-math), and loaded with
``ctypes``. Each operation is written to give exactly the bits NumPy's ufunc gives on 0-d
operands, which the Python loop (``lower.compile_loop``) and eager evaluation compute:

- float ``+ - * /`` are IEEE operations in the operands' precision (x86-64's SSE, so no
  double rounding); a NaN operand's payload is kept as NumPy's scalar loop keeps it (the
  first operand's if it is NaN, else the second's); ``max``/``min`` return the first
  operand when it is NaN or strictly greater (smaller), else the second, as NumPy's;
- integer ``+ - *``, ``neg`` and ``abs`` wrap around (computed in ``uint64_t``: signed
  overflow is undefined in C); a float-to-integer conversion truncates and saturates, NaN
  giving 0 (XLA's rule, which invarax's ``convert_element_type`` implements);
- comparisons, ``select_n`` (an int32 index clipped), ``sqrt``, ``floor``, ``ceil``,
  ``is_finite``, bitwise ``and or xor not``, ``integer_pow`` (binary powering in the
  order of its impl) and the other conversions are C's, which are NumPy's.

The shared object is cached on disk (``~/.cache/invarax/loops``, or ``$INVARAX_CACHE_DIR/
loops``), keyed by a hash of the source, the compiler command, its version and the flags,
and written atomically (a temporary file renamed); an entry that does not load is built
again. When no compiler runs, the compilation fails, or the body holds anything else, the
loop runs as Python (``lower.compile_loop``): same bits, slower. The config flag
``invarax_native_loops`` (default True) turns native loops off. The first call of a new
loop pays the compilation (about 0.1 s with GCC), later ones (and later processes) load it.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import subprocess
import sysconfig
import tempfile
import threading
import time

import numpy as np

from ..core.ir import Jaxpr, Literal

FLAGS = ("-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-shared")

_CTYPES = {"float32": "float", "float64": "double", "bool": "uint8_t",
           **{f"int{b}": f"int{b}_t" for b in (8, 16, 32, 64)},
           **{f"uint{b}": f"uint{b}_t" for b in (8, 16, 32, 64)}}

_PRELUDE = r"""#include <stdint.h>
#include <string.h>
#include <math.h>
static inline float f32_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline double f64_bits(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
#define NAN_FIRST(a, b, op) ((a) != (a) ? (a) op (a) : (a) op (b))
#define FMAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define FMIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define WRAP(T, a, op, b) ((T)((uint64_t)(a) op (uint64_t)(b)))
"""

_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


class _Unsupported(Exception):
    """The body holds something the native path does not compute."""


def _ctype(aval) -> str:
    if aval.shape != ():
        raise _Unsupported(f"a value of shape {aval.shape}")
    name = np.dtype(aval.dtype).name
    if name not in _CTYPES:
        raise _Unsupported(f"dtype {name}")
    return _CTYPES[name]


def _literal(v) -> str:
    """A C expression of exactly the literal's value."""
    val = np.asarray(v.val._value).reshape(())
    dt = val.dtype
    if dt == np.float32:
        return f"f32_bits(0x{int(val.view(np.uint32)):08x}u)"
    if dt == np.float64:
        return f"f64_bits(0x{int(val.view(np.uint64)):016x}ull)"
    if dt == np.bool_:
        return "1" if val else "0"
    _ctype(v.aval)
    if dt.kind == "u":
        return f"(({_CTYPES[dt.name]}){int(val)}ull)"
    return f"(({_CTYPES[dt.name]})({int(val)}ll))"


def _expr(eqn, args) -> str:
    """The C expression computing ``eqn`` (one 0-d output) from the C expressions ``args``."""
    name, params = eqn.primitive.name, eqn.params
    ins = [v.aval for v in eqn.invars]
    out = eqn.outvars[0].aval
    kind = np.dtype(ins[0].dtype).kind if ins else "f"
    t = _ctype(out)
    if name in _ARITH:
        a, b = args
        if kind == "f":
            return f"NAN_FIRST({a}, {b}, {_ARITH[name]})"
        if kind in "iu" and name != "div":
            return f"WRAP({t}, {a}, {_ARITH[name]}, {b})"
    elif name in _COMPARE:
        return f"(uint8_t)({args[0]} {_COMPARE[name]} {args[1]})"
    elif name in ("max", "min"):
        a, b = args
        if kind == "f":
            return f"F{name.upper()}({a}, {b})"
        return f"({a} {'>' if name == 'max' else '<'} {b} ? {a} : {b})"
    elif name in _BITWISE and kind in "iub":
        return f"({t})({args[0]} {_BITWISE[name]} {args[1]})"
    elif name == "not" and kind in "iub":
        return f"(uint8_t)!{args[0]}" if kind == "b" else f"({t})~{args[0]}"
    elif name == "neg" and kind in "fiu":
        return f"(-{args[0]})" if kind == "f" else f"WRAP({t}, 0, -, {args[0]})"
    elif name == "abs" and kind in "fiu":
        a = args[0]
        if kind == "f":
            return f"{'fabsf' if t == 'float' else 'fabs'}({a})"
        return a if kind == "u" else f"({a} < 0 ? WRAP({t}, 0, -, {a}) : {a})"
    elif name in ("sqrt", "floor", "ceil") and kind == "f":  # a NaN quieted, as NumPy's
        return f"({args[0]} != {args[0]} ? {args[0]} + {args[0]} : " \
               f"{name}{'f' if t == 'float' else ''}({args[0]}))"
    elif name == "is_finite" and kind == "f":
        return f"(uint8_t)(isfinite({args[0]}) != 0)"
    elif name == "select_n":
        return _select(ins[0], args)
    elif name == "convert_element_type":
        return _convert(ins[0], out, args[0])
    elif name == "integer_pow" and kind in "fiu":
        return _integer_pow(kind, t, args[0], params["y"])
    elif name in ("stop_gradient", "copy") and ins[0] == out:
        return args[0]
    raise _Unsupported(f"{name} of {[a.str_short() for a in ins]}")


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
    t = _CTYPES[np.dtype(dst.dtype).name]
    if dk == "b":
        return f"(uint8_t)({a} != 0)"
    if sk == "b":
        return f"({t})({a} != 0)"
    if sk == "f" and dk in "iu":  # truncate, saturate, NaN -> 0 (the impl's rule)
        info = np.iinfo(np.dtype(dst.dtype))
        tr = f"{'truncf' if _ctype(src) == 'float' else 'trunc'}({a})"
        high = f"0x1p{info.bits - (dk == 'i')}"
        low, low_val = (f"-0x1p{info.bits - 1}", f"(-{info.max}ll - 1)") if dk == "i" else (
            "0.0", "0")
        return (f"({a} != {a} ? ({t})0 : {tr} >= {high} ? ({t}){info.max}ull : "
                f"{tr} < {low} ? ({t}){low_val} : ({t}){tr})")
    if dk in "iu" and sk in "iu":
        return f"({t})(uint64_t){a}"
    return f"({t}){a}"


def _integer_pow(kind, t, a, y) -> str:
    if y == 0:
        return f"({t})1"
    mul = (lambda p, q: f"NAN_FIRST({p}, {q}, *)") if kind == "f" else (
        lambda p, q: f"WRAP({t}, {p}, *, {q})")
    acc, base, n = None, a, -y if y < 0 else y
    while n:  # the order of ops.elementwise._integer_pow_impl
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return f"NAN_FIRST(({t})1, {acc}, /)" if y < 0 else acc


class _Body:
    """The C statements of ``jaxpr`` on named inputs: ``lines``, ``outs`` (expressions)."""

    def __init__(self, jaxpr: Jaxpr, in_names, prefix: str):
        names = {id(v): n for v, n in zip((*jaxpr.constvars, *jaxpr.invars), in_names,
                                          strict=True)}
        for v in (*jaxpr.constvars, *jaxpr.invars):
            _ctype(v.aval)

        def ref(v):
            return _literal(v) if isinstance(v, Literal) else names[id(v)]

        self.lines = []
        for k, eqn in enumerate(jaxpr.eqns):
            if len(eqn.outvars) != 1:
                raise _Unsupported(f"{eqn.primitive.name} with {len(eqn.outvars)} outputs")
            out = eqn.outvars[0]
            name = f"{prefix}{k}"
            self.lines.append(f"const {_ctype(out.aval)} {name} = "
                              f"{_expr(eqn, [ref(v) for v in eqn.invars])};")
            names[id(out)] = name
        self.outs = [ref(v) for v in jaxpr.outvars]


def _decls(avals, names, slot) -> list:
    """Lines loading 0-d inputs ``names`` from the pointer array ``p`` from ``slot`` on."""
    return [f"    {_ctype(a)} {n} = *({_ctype(a)} *)p[{slot + k}];"
            for k, (a, n) in enumerate(zip(avals, names, strict=True))]


def scan_source(jaxpr: Jaxpr, num_consts: int, num_carry: int) -> str:
    """C source of ``void loop(void **p, int64_t start, int64_t count, int64_t step)``:
    the scan of ``jaxpr`` (see ``lower.compile_loop``); ``p`` points at the consts, the
    carry (read, then written at the end), the xs and the ys (contiguous, one element per
    index). Raises ``_Unsupported`` for a body the native path does not compute."""
    avals = [v.aval for v in (*jaxpr.constvars, *jaxpr.invars)]
    n_const = len(jaxpr.constvars) + num_consts
    n_in = len(avals)
    n_x = n_in - n_const - num_carry
    carry = avals[n_const:n_const + num_carry]
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    ins = [f"a{k}" for k in range(n_in)]
    body = _Body(jaxpr, ins, "t")
    lines = [_PRELUDE, "void loop(void **p, int64_t start, int64_t count, int64_t step) {"]
    lines += _decls(avals[:n_const + num_carry], ins[:n_const + num_carry], 0)
    for k in range(n_x):
        t = _ctype(avals[n_const + num_carry + k])
        lines.append(f"    const {t} *x{k} = (const {t} *)p[{n_const + num_carry + k}];")
    for k, a in enumerate(y_avals):
        lines.append(f"    {_ctype(a)} *y{k} = ({_ctype(a)} *)p[{n_in + k}];")
    lines.append("    for (int64_t s = 0; s < count; s++) {")
    lines.append("        const int64_t i = start + s * step;")
    lines += [f"        const {_ctype(avals[n_const + num_carry + k])} "
              f"{ins[n_const + num_carry + k]} = x{k}[i];" for k in range(n_x)]
    lines += [f"        {line}" for line in body.lines]
    lines += [f"        y{k}[i] = {o};" for k, o in enumerate(body.outs[num_carry:])]
    new = [f"n{k}" for k in range(num_carry)]
    lines += [f"        const {_ctype(a)} {n} = {o};"
              for a, n, o in zip(carry, new, body.outs[:num_carry], strict=True)]
    lines += [f"        {ins[n_const + k]} = {n};" for k, n in enumerate(new)]
    lines.append("    }")
    lines += [f"    *({_ctype(a)} *)p[{n_const + k}] = {ins[n_const + k]};"
              for k, a in enumerate(carry)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def while_source(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int) -> str:
    """C source of ``void loop(void **p)``: the while of ``cond`` and ``body`` (see
    ``lower.compile_while``); ``p`` points at the cond consts (constvars first), the body
    consts (likewise) and the carry (read, then written at the end)."""
    nc = len(cond.constvars) + cond_nconsts
    nb = len(body.constvars) + body_nconsts
    c_avals = [v.aval for v in (*cond.constvars, *cond.invars)]
    b_avals = [v.aval for v in (*body.constvars, *body.invars)]
    carry = b_avals[nb:]
    cc = [f"c{k}" for k in range(nc)]
    bc = [f"b{k}" for k in range(nb)]
    ks = [f"k{k}" for k in range(len(carry))]
    c = _Body(cond, [*cc, *ks], "u")
    b = _Body(body, [*bc, *ks], "t")
    lines = [_PRELUDE, "void loop(void **p) {"]
    lines += _decls(c_avals[:nc], cc, 0) + _decls(b_avals[:nb], bc, nc)
    lines += _decls(carry, ks, nc + nb)
    lines.append("    for (;;) {")
    lines += [f"        {line}" for line in c.lines]
    lines.append(f"        if (!({c.outs[0]})) break;")
    lines.append("        {")
    lines += [f"            {line}" for line in b.lines]
    new = [f"n{k}" for k in range(len(carry))]
    lines += [f"            const {_ctype(a)} {n} = {o};"
              for a, n, o in zip(carry, new, b.outs, strict=True)]
    lines += [f"            {k} = {n};" for k, n in zip(ks, new, strict=True)]
    lines.append("        }")
    lines.append("    }")
    lines += [f"    *({_ctype(a)} *)p[{nc + nb + k}] = {n};"
              for k, (a, n) in enumerate(zip(carry, ks, strict=True))]
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# Compilation, the on-disk cache and loading.

_LOCK = threading.Lock()
_LOADED = {}  # cache path -> the loaded function, or the reason it could not be built
_VERSIONS = {}  # compiler command -> its version line, or None if it does not run
COMPILED = []  # (key, seconds) of each compilation in this process (first-call cost)


def compiler() -> list:
    """The C compiler command: ``$CC``, else the one that built Python's extensions."""
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def cache_dir() -> str:
    """Where compiled loops are kept: ``$INVARAX_CACHE_DIR/loops``, else
    ``~/.cache/invarax/loops``."""
    root = os.environ.get("INVARAX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "invarax")
    return os.path.join(root, "loops")


def _version(cc: list):
    key = " ".join(cc)
    if key not in _VERSIONS:
        try:
            out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
            _VERSIONS[key] = out.stdout.splitlines()[0] if out.returncode == 0 and \
                out.stdout else None
        except (OSError, subprocess.SubprocessError):
            _VERSIONS[key] = None
    return _VERSIONS[key]


def cache_path(source: str):
    """The cache entry of ``source`` with this compiler, or None if no compiler runs."""
    cc = compiler()
    version = _version(cc)
    if version is None:
        return None
    key = hashlib.sha256("\0".join([source, " ".join(cc), version, *FLAGS]).encode()
                         ).hexdigest()[:32]
    return os.path.join(cache_dir(), f"{key}.so")


def load(source: str, symbol: str = "loop"):
    """The C function ``symbol`` of ``source``, compiled (or found in the cache) and loaded;
    None if no compiler runs or the compilation fails (the reason is kept in ``_LOADED``)."""
    path = cache_path(source)
    if path is None:
        return None
    key = path
    with _LOCK:
        if key in _LOADED:
            fn = _LOADED[key]
            return None if isinstance(fn, str) else fn
        try:
            fn = _load_or_build(compiler(), path, source, symbol)
        except (OSError, subprocess.SubprocessError) as e:
            fn = f"{type(e).__name__}: {e}"
        _LOADED[key] = fn
        return None if isinstance(fn, str) else fn


def _load_or_build(cc, path, source, symbol):
    folder = os.path.dirname(path)
    if os.path.exists(path):
        try:
            return getattr(ctypes.CDLL(path), symbol)
        except (OSError, AttributeError):
            pass  # a corrupt or partial entry: build it again
    os.makedirs(folder, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src = os.path.join(tmp, "loop.c")
        with open(src, "w") as f:
            f.write(source)
        out = os.path.join(tmp, "loop.so")
        done = subprocess.run([*cc, *FLAGS, "-o", out, src, "-lm"], capture_output=True,
                              text=True, timeout=120)
        if done.returncode != 0:
            raise subprocess.SubprocessError(f"{cc[0]} failed: {done.stderr.strip()[:500]}")
        os.replace(out, path)  # atomic: a reader sees the old entry or the whole new one
    COMPILED.append((path, time.perf_counter() - start))
    return getattr(ctypes.CDLL(path), symbol)


# ---------------------------------------------------------------------------------------
# The loops as Python functions (the signatures of lower.compile_loop / compile_while).


def _scalar_buffers(avals, values):
    return [np.array(v, dtype=a.dtype) for a, v in zip(avals, values, strict=True)]


def native_scan(jaxpr: Jaxpr, num_consts: int, num_carry: int, fallback):
    """``loop(*consts, *carry, *xs, *ys, order)`` running natively, or None (the body is
    not native, or no compiler). ``fallback`` (the Python loop) runs an ``order`` that is
    not a ``range``."""
    try:
        source = scan_source(jaxpr, num_consts, num_carry)
    except _Unsupported:
        return None
    fn = load(source)
    if fn is None:
        return None
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    avals = [v.aval for v in (*jaxpr.constvars, *jaxpr.invars)]
    n_scalar = len(jaxpr.constvars) + num_consts + num_carry
    scalar_avals = avals[:n_scalar]
    x_dtypes = [a.dtype for a in avals[n_scalar:]]
    n_ptr = len(avals) + len(jaxpr.outvars) - num_carry
    carry_slice = slice(n_scalar - num_carry, n_scalar)

    def run(*args):
        order = args[-1]
        if not isinstance(order, range):
            return fallback(*args)
        bufs = _scalar_buffers(scalar_avals, args[:n_scalar])
        xs = [np.ascontiguousarray(x, dtype=d) for x, d in
              zip(args[n_scalar:n_scalar + len(x_dtypes)], x_dtypes, strict=True)]
        ys = args[n_scalar + len(x_dtypes):-1]
        if any(not (y.flags.c_contiguous and y.flags.writeable) for y in ys):
            return fallback(*args)
        ptrs = (ctypes.c_void_p * n_ptr)(*(a.ctypes.data for a in (*bufs, *xs, *ys)))
        fn(ptrs, order.start, len(order), order.step)
        return [b[()] for b in bufs[carry_slice]]

    run.source = source
    run.native = True
    return run


def native_while(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int):
    """``loop(*cond_consts, *body_consts, *carry)`` running natively, or None."""
    try:
        source = while_source(cond, body, cond_nconsts, body_nconsts)
    except _Unsupported:
        return None
    fn = load(source)
    if fn is None:
        return None
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p]
    avals = [*(v.aval for v in (*cond.constvars, *cond.invars[:cond_nconsts])),
             *(v.aval for v in (*body.constvars, *body.invars))]
    n = len(avals)
    n_carry = len(body.invars) - body_nconsts

    def run(*args):
        bufs = _scalar_buffers(avals, args)
        fn((ctypes.c_void_p * n)(*(b.ctypes.data for b in bufs)))
        return [b[()] for b in bufs[n - n_carry:]]

    run.source = source
    run.native = True
    return run
