"""``python -m benchmarks [--quick | --tiny]``: invarax against JAX, PyTorch and autograd.

Runs every workload in invarax and in each installed peer, prints the table and writes
it, with the machine's details, to ``benchmarks/results.md`` (``--out`` another folder),
with a bar chart of the invarax/JAX ratios (``ratios.png``, when matplotlib is installed).
``--quick`` (about 2 minutes on 2 cores) times fewer repeats of the same sizes; ``--tiny``
shrinks every size, to check that the harness works. ``--linalg`` runs the linear algebra
and FFT table of ``benchmarks/linalg.py`` instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

import numpy as np

from . import cnn, memory, peers, problems, report, transformer
from .timing import medians


def _labels(cfg: problems.Config) -> dict:
    """Timed workload name -> (row label, unit: seconds per unit shown)."""
    mlp = "-".join(map(str, cfg.mlp))
    return {
        "train": (f"1. MLP {mlp} train step, batch {cfg.batch}, SGD (ms)", 1e-3),
        "vmap": (
            f"2. vmap of a tanh MLP {'-'.join(map(str, cfg.small_mlp))}, {cfg.points} points (ms)",
            1e-3,
        ),
        "per_example": (
            f"3. per-example grads vmap(grad), MLP {'-'.join(map(str, cfg.example_mlp))}, "
            f"batch {cfg.example_batch} (ms)",
            1e-3,
        ),
        "elementwise": (f"4. fused elementwise, {cfg.elementwise:.0e} elements (ms)", 1e-3),
        "jacfwd": (f"5a. jacfwd of prod(a**2 - a**3 - a), {cfg.jacobian} elements (ms)", 1e-3),
        "jacrev": (f"5b. jacrev of prod(a**2 - a**3 - a), {cfg.jacobian} elements (ms)", 1e-3),
        "first_call": ("6. first-call jit of the train step (ms)", 1e-3),
        "dispatch": (
            f"7. cached jit call, two float32[8] arguments (µs per call, "
            f"{problems.DISPATCH_CALLS} in a row)",
            1e-6 * problems.DISPATCH_CALLS,
        ),
        "fori": (f"10. jit(fori_loop) of a scalar body, {cfg.fori_steps:.0e} iterations (ms)",
                 1e-3),
        "rnn": ("11. LSTM by scan, hidden {}, batch {}, {} steps: value_and_grad (ms)".format(
            *cfg.rnn[:3]), 1e-3),
        "newton": (f"12. vmap(while_loop): Newton sqrt of {cfg.newton} scalars (ms)", 1e-3),
        **_cnn_labels(cfg),
    }


def _cnn_labels(cfg: problems.Config) -> dict:
    """The rows of the convolution workloads (``cnn.py``)."""
    batch, side, (rn, rc, rs), pool = cnn.sizes(cfg)
    return {
        "cnn_eqx": (f"13a. CNN train step, Equinox style, batch {batch} of {side}x{side}x3 "
                    "(ms)", 1e-3),
        "cnn_lax": ("13b. the same CNN written with lax.conv_general_dilated (ms)", 1e-3),
        "resnet": (f"14. ResNet block (3x3, {rc} ch, {rs}x{rs}, batch {rn}) fwd+bwd (ms)",
                   1e-3),
        "maxpool": (f"15. max-pool 2x2 fwd+bwd, {'x'.join(map(str, pool))} (ms)", 1e-3),
        "transformer": ("17. transformer block train step (pre-LN, d={2}, {3} heads, seq {1}, "
                        "batch {0}), Equinox style (ms)".format(*transformer.sizes(cfg)), 1e-3),
    }


def _flat(tree) -> list:
    return [x for leaf in tree for x in _flat(leaf)] if isinstance(tree, list | tuple) else [tree]


def _check(key: str, runs: dict, to_numpy: dict) -> None:
    """Raise unless every library's result of workload ``key`` agrees with invarax's."""
    results = {name: [to_numpy[name](x) for x in _flat(run())] for name, run in runs.items()}
    reference = results.pop("invarax")
    for name, result in results.items():
        for ours, theirs in zip(reference, result, strict=True):
            scale = float(np.max(np.abs(ours), initial=1e-30))
            np.testing.assert_allclose(
                theirs, ours, rtol=2e-3, atol=2e-4 * scale, err_msg=f"{name}'s {key}"
            )


def _row(label: str, values: dict, invert: bool = False) -> dict:
    ours, jax = values.get("invarax"), values.get("jax")
    if not ours or not jax:  # missing, or a memory growth of 0
        return {"label": label, "values": values, "ratio": None}
    return {"label": label, "values": values, "ratio": jax / ours if invert else ours / jax}


def measure(cfg: problems.Config, names: list) -> list[dict]:
    """The table's rows: every workload in every library of ``names`` (invarax first)."""
    loaded = {name: peers.load(name, cfg) for name in names}
    to_numpy = {name: conv for name, (_, conv) in loaded.items()}
    rows = []
    for key, (label, unit) in _labels(cfg).items():
        runs = {name: w[key]() for name, (w, _) in loaded.items() if key in w}
        _check(key, runs, to_numpy)
        slow = key == "first_call"
        calls = 1 if slow else cfg.calls
        times = medians(runs, cfg.rounds * calls, calls, cfg.pause)
        rows.append(_row(label, {name: t / unit for name, t in times.items()}))
        print(f"  {label}: done", flush=True)
    rows.append(_matmul(cfg, loaded))
    rows.append(_conv(cfg, loaded))
    rows.append(_memory(cfg, names))
    return rows


def _matmul(cfg: problems.Config, loaded: dict) -> dict:
    runs = {name: w["matmul"]() for name, (w, _) in loaded.items()}
    a, b = problems.matmul_data(cfg)
    times = medians({**runs, "numpy": lambda: a @ b}, cfg.rounds * cfg.calls, cfg.calls, cfg.pause)
    gflops = {name: 2.0 * cfg.matmul**3 / t / 1e9 for name, t in times.items()}
    n = cfg.matmul
    label = f"8. matmul {n}x{n}x{n} float32, GFLOP/s (NumPy/OpenBLAS: {gflops.pop('numpy'):.3g})"
    return _row(label, gflops, invert=True)


def _conv(cfg: problems.Config, loaded: dict) -> dict:
    """GFLOP/s of the ResNet block's 3x3 convolution, beside invarax's gemm: the gemm of the
    convolution's own shape (its explicit patches times the kernel) and the square gemm of
    row 8, the machine's contraction throughput (the issue's goal: a 3x3 convolution of 32
    or more channels within 80% of it)."""
    runs = {name: w["conv"]() for name, (w, _) in loaded.items() if "conv" in w}
    _check("conv", runs, {name: conv for name, (_, conv) in loaded.items()})
    n, c, side = cnn.sizes(cfg)[2]
    import invarax.numpy as inp

    a, b = (inp.asarray(np.ones(shape, np.float32))
            for shape in ((n * side * side, 9 * c), (9 * c, c)))
    square = inp.asarray(problems.matmul_data(cfg)[0])
    runs["gemm"] = lambda: (a @ b).block_until_ready()
    runs["square"] = lambda: (square @ square).block_until_ready()
    times = medians(runs, cfg.rounds * cfg.calls, cfg.calls, cfg.pause)
    flops = cnn.conv_flops(cfg)
    peak = 2.0 * cfg.matmul**3 / times.pop("square") / 1e9
    gflops = {name: flops / t / 1e9 for name, t in times.items()}
    same = gflops.pop("gemm")
    label = (f"16. conv 3x3 {c}->{c} ch, {side}x{side}, batch {n}, GFLOP/s (invarax: "
             f"{gflops['invarax'] / peak:.0%} of its {cfg.matmul}^3 gemm's {peak:.3g}; "
             f"gemm {n * side * side}x{9 * c}x{c}: {same:.3g})")
    return _row(label, gflops, invert=True)


def _memory(cfg: problems.Config, names: list) -> dict:
    sizes = {name: [] for name in names}
    for _ in range(cfg.memory_repeats):
        for name in names:
            sizes[name].append(memory.measure(name, cfg))
    label = f"9. peak RSS growth of {cfg.steps} train steps (MB)"
    return _row(label, {name: float(np.median(s)) for name, s in sizes.items()})


def run(cfg: problems.Config, out: Path, command: str) -> str:
    """Measure, write ``out/results.md`` (and ``out/ratios.png``), return the table."""
    out.mkdir(parents=True, exist_ok=True)
    names = peers.installed()
    start = os.getloadavg()[0]
    rows = measure(cfg, names)
    chart = importlib.util.find_spec("matplotlib") is not None and "jax" in names
    if chart:
        report.chart(rows, out / "ratios.png")
    text = report.results_md(
        rows,
        command=command,
        versions=peers.versions(names),
        loads=(start, os.getloadavg()[0]),
        config=cfg,
        chart=chart,
    )
    (out / "results.md").write_text(text)
    return report.table(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repeats (about 2 minutes)")
    size.add_argument("--tiny", action="store_true", help="tiny sizes: a check of the harness")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="results folder")
    parser.add_argument("--linalg", action="store_true", help="the linalg/FFT table instead")
    args = parser.parse_args(argv)
    if args.linalg:
        from . import linalg

        return linalg.main(["--quick"] if args.quick else ["--tiny"] if args.tiny else [])
    cfg = problems.CONFIGS["tiny" if args.tiny else "quick" if args.quick else "full"]
    flags = " --quick" if args.quick else " --tiny" if args.tiny else ""
    print(run(cfg, args.out, f"python -m benchmarks{flags}"))


if __name__ == "__main__":
    main()
