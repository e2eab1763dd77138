"""N6: one program, run with the kernels' dispatch capped at each level (``INVARAX_MAX_ISA``),
NumPy's capped to match (``NPY_DISABLE_CPU_FEATURES``) and NumPy's OpenBLAS forced to that
level's kernel (``OPENBLAS_CORETYPE``: Prescott, Haswell, SkylakeX, as on machines of those
generations), gives the same bits in the DEFAULT configuration (no flag set): invarax's
elementary functions, the special functions and composites built on them, jax.nn
activations, softmax, an MLP's loss and gradients (eager and jit), a fused expression,
random samplers, FFTs, matmuls and convolutions (each level's own microkernels), and every
linear algebra function of ``invarax verify`` in float32 and float64 (no float result
comes from a vendor BLAS/LAPACK). A level this CPU lacks (AVX-512 on many) is not run."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from invarax.kernels import _native

ROOT = Path(__file__).resolve().parents[1]

# NumPy's dispatch groups above x86-64-v2 that each level must not use.
NUMPY_CAPS = {
    "baseline": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "avx2": "X86_V4 AVX512_ICL AVX512_SPR",
    "avx512": "",
}
KERNEL_LEVEL = {"baseline": "scalar", "avx2": "avx2", "avx512": "avx512"}
# (INVARAX_MAX_ISA, OPENBLAS_CORETYPE) of each run: each level with the OpenBLAS kernel of
# machines of its generation; NumPy's own float results (the "vendor" line, not compared)
# change with the core type, invarax's must not. A CPU without AVX-512 runs Sandybridge's
# kernel (AVX) in place of SkylakeX's, so that three core types are always compared.
RUNS = [("baseline", "Prescott"), ("avx2", "Haswell"), ("avx512", "SkylakeX")]
WITHOUT_AVX512 = ("avx2", "Sandybridge")

PROGRAM = r"""
import hashlib
import numpy as np
import invarax
import invarax.numpy as jnp
from invarax import lax, nn, random
from invarax.scipy import special as jsp
from invarax.kernels import _native

assert invarax.config.invarax_exact_elementary  # the default: invarax's own functions
rng = np.random.default_rng(0)
x32 = np.concatenate([rng.uniform(-30, 30, 20000), rng.uniform(-1, 1, 20000),
                      np.exp(rng.uniform(-80, 80, 20000))]).astype(np.float32)
with np.errstate(over="ignore"):
    x32 = np.concatenate([x32, -x32, rng.uniform(-1e6, 1e6, 2000).astype(np.float32)])
pos = np.abs(x32) + np.float32(1e-30)
unit = x32 / (np.float32(1) + np.abs(x32))  # in (-1, 1)
level = _native.set_isa("scalar")  # returns the level in use, which is then restored
_native.set_isa(level)
out = {}
for dtype in (np.float32, np.float64):
    invarax.config.update("jax_enable_x64", dtype == np.float64)  # float64 stays float64
    x, p, u = x32.astype(dtype), pos.astype(dtype), unit.astype(dtype)
    arrays = {
        "exp": jnp.exp(x), "log": jnp.log(p), "expm1": jnp.expm1(x), "log1p": jnp.log1p(p),
        "tanh": jnp.tanh(x), "logistic": lax.logistic(x), "sin": jnp.sin(x), "cos": jnp.cos(x),
        "exp2": jnp.exp2(x), "sinh": jnp.sinh(x), "cosh": jnp.cosh(x),
        "log2": jnp.log2(p), "log10": jnp.log10(p), "arcsinh": jnp.arcsinh(x),
        "arccosh": jnp.arccosh(p + 1), "arctanh": jnp.arctanh(u), "arctan": jnp.arctan(x),
        "arcsin": jnp.arcsin(u), "arccos": jnp.arccos(u), "tan": jnp.tan(x),
        "cbrt": jnp.cbrt(x), "arctan2": jnp.arctan2(x, x[::-1]),
        "power": jnp.power(p, u * 30), "power_int": jnp.power(x, jnp.round(u * 10)),
        "erf": jsp.erf(x), "erfc": jsp.erfc(x), "erf_inv": lax.erf_inv(u),
        "gammaln": jsp.gammaln(x), "digamma": jsp.digamma(x),
        "gammainc": jsp.gammainc(p[:500] % 20 + 0.1, p[500:1000] % 30),
        "betainc": jsp.betainc(p[:300] % 9 + 0.5, p[300:600] % 7 + 0.5, jnp.abs(u[:300])),
        "ndtr": jsp.ndtr(x),
        "log_ndtr": jsp.log_ndtr(x), "ndtri": jsp.ndtri(u * 0.5 + 0.5),
        "logsumexp": jsp.logsumexp(x.reshape(-1, 2), axis=1), "xlogy": jsp.xlogy(x, p),
        "xlog1py": jsp.xlog1py(x, p), "entr": jsp.entr(u), "logit": jsp.logit(u * 0.5 + 0.5),
        "logaddexp": jnp.logaddexp(x, x[::-1]), "logaddexp2": jnp.logaddexp2(x, x[::-1]),
        "sinc": jnp.sinc(u), "cumlogsumexp": lax.cumlogsumexp(x[:4000].reshape(40, 100), 1),
    }
    for name, value in arrays.items():
        assert np.asarray(value).dtype == dtype, (name, np.asarray(value).dtype)
        out[f"{name}_{np.dtype(dtype).name}"] = np.asarray(value)
invarax.config.update("jax_enable_x64", False)
a = jnp.asarray(x32[:4096].reshape(64, 64) * np.float32(0.1))
out.update(sigmoid=nn.sigmoid(a), silu=nn.silu(a), softplus=nn.softplus(a),
           gelu=nn.gelu(a, approximate=True), gelu_erf=nn.gelu(a, approximate=False),
           tanh_nn=nn.tanh(a), softmax=nn.softmax(a), log_softmax=nn.log_softmax(a),
           logsumexp_nn=nn.logsumexp(a, axis=-1), logspace=jnp.logspace(-3, 3, 1001))
big = jnp.asarray(np.resize(x32, 1 << 19) * np.float32(0.01))  # fused and chunked under jit
fused = invarax.jit(lambda v: jnp.exp(-v * v) * jnp.sin(v) + jnp.tanh(v) * jnp.log1p(v * v))
out.update(fused=fused(big), fused_eager=jnp.exp(-big * big) * jnp.sin(big)
           + jnp.tanh(big) * jnp.log1p(big * big))

def mlp(params, xs, ys):
    h = xs
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -jnp.mean(jnp.sum(nn.log_softmax(logits) * ys, axis=-1))

key = random.PRNGKey(0)
keys = random.split(key, 5)
sizes = [(32, 64), (64, 64), (64, 10)]
params = [(random.normal(k, s) * 0.3, jnp.zeros(s[1])) for k, s in zip(keys[:3], sizes)]
xs = random.normal(keys[3], (128, 32))
ys = nn.one_hot(random.randint(keys[4], (128,), 0, 10), 10)
loss, grads = invarax.value_and_grad(mlp)(params, xs, ys)
jloss, jgrads = invarax.jit(invarax.value_and_grad(mlp))(params, xs, ys)
out.update(loss=loss, jloss=jloss, normal=random.normal(key, (10000,)),
           truncated=random.truncated_normal(key, -2.0, 3.0, (10000,)),
           laplace=random.laplace(key, (10000,)), exponential=random.exponential(key, (10000,)),
           gumbel=random.gumbel(key, (10000,)), logistic=random.logistic(key, (10000,)))
spec = x32[:4096].reshape(4, 1024) + 1j * x32[4096:8192].reshape(4, 1024)
out.update(rfft=jnp.fft.rfft(x32[:2 ** 14]), fft=jnp.fft.fft(spec), irfft=jnp.fft.irfft(spec),
           fft2_odd=jnp.fft.fft2(spec[:, :999].reshape(-1, 37, 27)))
for dtype in (np.float32, np.float64):  # the blocked microkernels' tiles, cut and whole
    invarax.config.update("jax_enable_x64", dtype == np.float64)
    a, b = rng.standard_normal((145, 513)).astype(dtype), rng.standard_normal((513, 70))
    img, ker = rng.standard_normal((2, 16, 13, 11)), rng.standard_normal((40, 16, 3, 3))
    name = np.dtype(dtype).name
    out[f"matmul_{name}"] = jnp.matmul(a, b.astype(dtype))
    out[f"conv_{name}"] = lax.conv_general_dilated(img.astype(dtype), ker.astype(dtype),
                                                   (1, 1), "SAME")
invarax.config.update("jax_enable_x64", False)
for i, (gw, gb) in enumerate(grads):
    out[f"gw{i}"], out[f"gb{i}"] = gw, gb
for i, (gw, gb) in enumerate(jgrads):
    out[f"jgw{i}"], out[f"jgb{i}"] = gw, gb
for name in sorted(out):
    print(name, hashlib.sha256(np.ascontiguousarray(np.asarray(out[name])).tobytes()).hexdigest())
from invarax._verify._battery import run_battery  # every linalg function, real and complex
for name, value in run_battery(["linalg/"]).items():
    print(name, value)
vendor = rng.standard_normal((300, 300))
print("vendor", hashlib.sha256(np.linalg.cholesky(vendor @ vendor.T).tobytes()).hexdigest())
print("level", level)
"""


def run_at(level, coretype):
    """The digests of PROGRAM at ``level`` and OpenBLAS ``coretype``, and NumPy's own
    (vendor) Cholesky digest."""
    env = dict(os.environ, INVARAX_MAX_ISA=level, NPY_DISABLE_CPU_FEATURES=NUMPY_CAPS[level],
               OPENBLAS_CORETYPE=coretype, PYTHONPATH=str(ROOT), INVARAX_NUM_THREADS="1")
    env.pop("INVARAX_EXACT_ELEMENTARY", None)  # the default configuration
    env.pop("OPENBLAS_L2_SIZE", None)  # (it would override the core type's blocking)
    result = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines.pop("level") == KERNEL_LEVEL[level], "INVARAX_MAX_ISA did not cap the kernels"
    return lines, lines.pop("vendor")


def _dynamic_openblas() -> bool:
    """NumPy links an OpenBLAS that picks its kernel at run time (OPENBLAS_CORETYPE works)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:
        return False
    return "openblas" in blas.get("name", "") and "DYNAMIC_ARCH" in blas.get(
        "openblas configuration", "")


def test_every_level_and_core_type_gives_the_same_digests():
    chosen = [run for run in RUNS if KERNEL_LEVEL[run[0]] in _native.isas()]
    if "avx512" not in _native.isas() and "avx2" in _native.isas():
        chosen.append(WITHOUT_AVX512)
    if len(chosen) < 2:
        pytest.skip("this CPU runs one dispatch level only")
    runs = {run: run_at(*run) for run in chosen}
    first, _ = runs[chosen[0]]
    assert sum(name.startswith("linalg/") for name in first) == 38
    for (level, coretype), (got, _) in runs.items():
        differ = sorted(name for name in first if got[name] != first[name])
        assert not differ, (f"INVARAX_MAX_ISA={level} OPENBLAS_CORETYPE={coretype} differs "
                            f"from {chosen[0]} in {differ}")
    if _dynamic_openblas():  # the core types did change NumPy's own results: a real test
        assert len({vendor for _, vendor in runs.values()}) > 1, "OPENBLAS_CORETYPE had no effect"


def test_bad_level_is_a_clear_error():
    env = dict(os.environ, INVARAX_MAX_ISA="avx9000", PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", "import invarax"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "INVARAX_MAX_ISA='avx9000' is not a dispatch level; use one of baseline" in (
        result.stderr)
