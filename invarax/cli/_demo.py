"""``invarax demo``: train an MLP with Adam, plot the loss, and report reproducibility.

The task: regress ``sin(3 x0) * cos(2 x1)`` on 2048 points of the square [-1, 1]^2 with
an ``nn.MLP`` trained full-batch by ``optim.adam`` (warmup, then cosine decay) under
``filter_jit``. The trained weights are then run four ways that should agree (one
example, a small batch, jit, native batching) in invarax and, when installed, in JAX
and PyTorch with the same weights.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ..kernels.elementary import elementary
from . import _report as report

WIDTH, DEPTH, ACTIVATION = 64, 2, "tanh"


def make_data(n: int, seed: int = 0):
    """``n`` inputs uniform in [-1, 1]^2 and their targets, float32."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (n, 2)).astype(np.float32)
    y = elementary("sin", 3.0 * x[:, 0]) * elementary("cos", 2.0 * x[:, 1])  # same on any CPU
    return x, y


def train(steps: int, out, seed: int = 0, peak_learning_rate: float = 1e-2):
    """Train the demo MLP; return the model and the loss of every step."""
    import invarax
    import invarax.numpy as jnp
    from invarax import nn, optim

    x, y = (jnp.asarray(a) for a in make_data(2048, seed))
    model = nn.MLP(2, "scalar", WIDTH, DEPTH, activation=getattr(jnp, ACTIVATION),
                   key=invarax.random.key(seed))
    schedule = optim.warmup_cosine_decay_schedule(
        0.0, peak_learning_rate, warmup_steps=max(1, steps // 10), decay_steps=steps,
        end_value=peak_learning_rate / 100)
    opt = optim.adam(schedule)
    state = opt.init(invarax.filter(model, invarax.is_inexact_array))

    def loss_fn(m, inputs, targets):
        return jnp.mean((invarax.vmap(m)(inputs) - targets) ** 2)

    @invarax.filter_jit
    def step(m, s, inputs, targets):
        loss, grads = invarax.filter_value_and_grad(loss_fn)(m, inputs, targets)
        updates, s = opt.update(grads, s, m)
        return invarax.apply_updates(m, updates), s, loss

    losses = []
    bar = ProgressBar(steps, out)
    for i in range(steps):
        model, state, loss = step(model, state, x, y)
        losses.append(float(loss))
        bar.update(i + 1, losses[-1])
    bar.close()
    return model, np.array(losses)


class ProgressBar:
    """A one-line progress bar with the loss; on a non-terminal, a line every 10%."""

    def __init__(self, total: int, out, width: int = 30):
        self.total, self.out, self.width = total, out, width
        self.live = getattr(out, "isatty", lambda: False)()
        self.next_line = 0

    def update(self, done: int, loss: float) -> None:
        filled = self.width * done // self.total
        text = (f"training [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{done:>{len(str(self.total))}}/{self.total}  loss {loss:.5f}")
        if self.live:
            print("\r" + text, end="", file=self.out, flush=True)
        elif done >= self.next_line or done == self.total:
            print(text, file=self.out)
            self.next_line = done + max(1, self.total // 10)

    def close(self) -> None:
        if self.live:
            print(file=self.out)


def plot_losses(losses, path: str) -> str | None:
    """Write the loss curve to ``path`` as a PNG; None when matplotlib is absent."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.semilogy(np.arange(1, len(losses) + 1), losses)
    ax.set(xlabel="step", ylabel="mean squared error",
           title="invarax demo: MLP 2-64-64-1, Adam, filter_jit")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def weights_of(model):
    """The (weight, bias) float32 NumPy pairs of an ``nn.MLP``."""
    return [(np.asarray(layer.weight), np.asarray(layer.bias)) for layer in model.layers]


def demo(out=None, steps: int = 400, png: str = "invarax-demo-loss.png",
         peers: bool = True) -> int:
    """Run the demo; return 0 when training converged and every invarax check is bitwise."""
    out = sys.stdout if out is None else out
    start = time.perf_counter()
    print(f"invarax demo: an MLP 2-{WIDTH}-{WIDTH}-1 ({ACTIVATION}) learns "
          "sin(3 x0) cos(2 x1) with Adam under filter_jit "
          "(learning rate: linear warmup, then cosine decay)\n", file=out)
    model, losses = train(steps, out)
    drop = losses[0] / losses[-1]
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.5f} ({drop:.0f}x lower) in {steps} steps, "
          f"{time.perf_counter() - start:.1f} s", file=out)
    if png:
        written = plot_losses(losses, png)
        print(f"loss curve: {written}" if written else
              "loss curve: skipped (pip install matplotlib, or the demo extra)", file=out)

    x, _ = make_data(10_000, seed=1)
    columns = {"invarax": report.invarax_checks(model, x)}
    if peers:
        layers = weights_of(model)
        columns["JAX"] = report.jax_checks(layers, ACTIVATION, x)
        columns["PyTorch"] = report.torch_checks(layers, ACTIVATION, x)
    print("\nreproducibility report for the trained model (float32, CPU):", file=out)
    print(report.format_report(columns), file=out)
    print(f"\ndone in {time.perf_counter() - start:.1f} s", file=out)
    failures = []
    if drop < 10:
        failures.append(f"training did not converge: the loss fell {drop:.1f}x in {steps} "
                        "steps, the demo asks for 10x (run more steps, e.g. the default 400)")
    if not report.all_equal(columns["invarax"]):
        failures.append("an invarax check above is not bitwise equal (a numerics contract "
                        "bug: please report it)")
    for failure in failures:
        print(f"invarax demo: exit status 1: {failure}", file=out)
    return 1 if failures else 0
