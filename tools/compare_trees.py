"""Compare the bits of two invarax source trees: run a battery of workloads under each and
print the workloads whose results differ (a refactoring must print none).

The battery is tests/test_isa_invariance.py's program (elementary and special functions,
an MLP's loss and gradients eager and jit, random samplers, FFTs) and the workloads below
(a convolution's gradient, an LSTM by scan under jit(value_and_grad), Adam steps of an
Equinox-style MLP under filter_jit/filter_vmap, linear algebra, a batched while loop,
custom_vjp, checkpoint, hessian, jacfwd, a fused expression, softmax). Each tree needs its
compiled kernels built in place (``python setup.py build_ext --inplace``).

Usage: python tools/compare_trees.py OLD_TREE NEW_TREE
Example (a git worktree of the old commit beside the current one):
    git worktree add --detach /tmp/old HEAD~1
    (cd /tmp/old && python setup.py -q build_ext --inplace)
    python tools/compare_trees.py /tmp/old .
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BATTERY = r"""import hashlib
import numpy as np
import invarax
import invarax.numpy as jnp
from invarax import lax, nn, random, optim
out = {}
k = random.split(random.PRNGKey(1), 8)
# conv gradient
x = random.normal(k[0], (4, 3, 16, 16)); w = random.normal(k[1], (8, 3, 3, 3))
cl = lambda w, x: jnp.sum(jnp.tanh(lax.conv_general_dilated(x, w, (1, 1), "SAME")) ** 2)
out["conv_grad"] = invarax.jit(invarax.grad(cl))(w, x)
out["conv_grad_eager"] = invarax.grad(cl)(w, x)
# LSTM by scan, value_and_grad
H = 32
Wx = random.normal(k[2], (16, 4 * H)) * 0.1; Wh = random.normal(k[3], (H, 4 * H)) * 0.1
xs = random.normal(k[4], (20, 8, 16))
def lstm(Wx, Wh, xs):
    def cell(c, x):
        h, s = c
        g = x @ Wx + h @ Wh
        i, f, o, u = jnp.split(g, 4, axis=-1)
        s = jax_sig(f) * s + jax_sig(i) * jnp.tanh(u)
        h = jax_sig(o) * jnp.tanh(s)
        return (h, s), h
    (h, s), hs = lax.scan(cell, (jnp.zeros((8, H)), jnp.zeros((8, H))), xs)
    return jnp.sum(hs ** 2)
jax_sig = nn.sigmoid
v, g = invarax.jit(invarax.value_and_grad(lstm, argnums=(0, 1)))(Wx, Wh, xs)
out["lstm_v"], out["lstm_gx"], out["lstm_gh"] = v, g[0], g[1]
# Equinox MLP, filter_vmap/filter_jit, adam steps
model = nn.MLP(8, 3, 32, 2, key=k[5])
data = random.normal(k[6], (64, 8)); tgt = random.normal(k[7], (64, 3))
opt = optim.adam(1e-2); state = opt.init(invarax.filter(model, invarax.is_inexact_array))
@invarax.filter_jit
def step(model, state):
    loss_of = lambda m: jnp.mean((invarax.filter_vmap(m)(data) - tgt) ** 2)
    loss, gr = invarax.filter_value_and_grad(loss_of)(model)
    upd, state = opt.update(gr, state, model)
    return invarax.apply_updates(model, upd), state, loss
for i in range(5):
    model, state, loss = step(model, state)
    out[f"adam_loss{i}"] = loss
out["mlp_out"] = invarax.filter_vmap(model)(data)
# linalg, while loop, custom_vjp, checkpoint, hessian, jacfwd
A = random.normal(k[0], (40, 40)); S = A @ A.T + 40 * jnp.eye(40)
out["chol"] = jnp.linalg.cholesky(S)
out["solve_grad"] = invarax.grad(lambda S: jnp.sum(jnp.linalg.solve(S, jnp.ones(40))))(S)
out["eigh"] = jnp.linalg.eigh(S)[0]
newton = lambda a: lax.while_loop(lambda c: c[1] < 20,
                                  lambda c: ((c[0] + a / c[0]) / 2, c[1] + 1), (a, 0))[0]
out["newton"] = invarax.vmap(newton)(jnp.linspace(1.0, 50.0, 100))
@invarax.custom_vjp
def f(x): return jnp.sin(x) * x
f.defvjp(lambda x: (f(x), x), lambda x, g: (g * (jnp.cos(x) * x + jnp.sin(x)),))
out["custom_vjp"] = invarax.vmap(invarax.grad(f))(jnp.linspace(-3, 3, 50))
ckpt = invarax.checkpoint(lambda x: jnp.sum(jnp.exp(jnp.sin(x)) ** 2))
out["ckpt"] = invarax.grad(ckpt)(jnp.linspace(0, 1, 300))
out["hess"] = invarax.hessian(lambda x: jnp.prod(x ** 2 - x ** 3 - x))(jnp.linspace(0.1, 0.9, 30))
out["jacfwd"] = invarax.jacfwd(lambda x: jnp.cumsum(jnp.tanh(x)) * x)(jnp.linspace(0.1, 0.9, 30))
big = random.normal(k[1], (1 << 20,))
out["fused"] = invarax.jit(lambda x: jnp.tanh(x) * jnp.exp(-x * x) + jnp.sin(x) ** 2)(big)
out["softmax"] = invarax.jit(nn.softmax)(random.normal(k[2], (256, 1000)))
for name in sorted(out):
    print(name, hashlib.sha256(np.ascontiguousarray(np.asarray(out[name])).tobytes()).hexdigest())
"""


def _isa_program() -> str:
    source = (ROOT / "tests" / "test_isa_invariance.py").read_text()
    return re.search(r'PROGRAM = r"""(.*?)"""', source, re.S).group(1)


def digests(tree: Path) -> dict:
    """``{workload: sha256 of its result}`` computed by the invarax of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    out = {}
    for program in (_isa_program(), BATTERY):
        run = subprocess.run([sys.executable, "-c", program], env=env, cwd="/", text=True,
                             capture_output=True, timeout=900, check=True)
        out.update(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    return out


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    old, new = (digests(Path(t)) for t in argv)
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    print(f"{len(old.keys() & new.keys())} workloads compared, {len(differ)} differ")
    for name in differ:
        print(f"  {name}: {old.get(name, '-')[:16]} -> {new.get(name, '-')[:16]}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
