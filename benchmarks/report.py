"""The results table: markdown for the terminal and results.md, the machine, the chart."""

from __future__ import annotations

import datetime
import os
import platform

from . import peers, problems

DASH = "—"  # a library without the feature


CHART = "\n![invarax/JAX per workload](ratios.png)\n"


def table(rows: list[dict]) -> str:
    """The markdown table of ``rows`` (``label``, ``values`` by library, ``ratio``)."""
    titles = list(peers.TITLES.values())
    lines = [
        "| workload | " + " | ".join(titles) + " | invarax/JAX |",
        "|---|" + "---:|" * (len(titles) + 1),
    ]
    for row in rows:
        cells = [_number(row["values"].get(name)) for name in peers.TITLES]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + f" | {_number(row['ratio'])} |")
    return "\n".join(lines)


def _number(x) -> str:
    if x is None:
        return DASH
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def machine() -> str:
    """The CPU model and its number of cores."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def results_md(rows, *, command: str, versions: dict, loads: tuple, config, chart: bool) -> str:
    """The text of results.md: how it was measured, on what, and the table."""
    start, end = loads
    cores = os.cpu_count() or 1
    shared = (
        " The machine was shared with other jobs and loaded when the run started, so the"
        " timings are noisier than on an idle machine."
        if start > 0.5 * cores
        else ""
    )
    libs = ", ".join(f"{name} {v}" for name, v in versions.items())
    return f"""# Benchmark results

Command: `{command}` ({datetime.date.today().isoformat()}). Each cell is the median of
{config.rounds * config.calls} timed calls per library ({config.rounds} blocks of {config.calls}; \
first calls: {config.rounds} blocks of 1; memory: {config.memory_repeats} run(s) per library).

Machine: {machine()}; Python {platform.python_version()}; {libs}.
Load average (1 min) {start:.2f} when the run started, {end:.2f} when it ended
(this run included).{shared}

{table(rows)}

How: every workload runs in each installed library in the same process, the
libraries alternating in blocks of back-to-back calls (each block after a pause and an
untimed warm-up call). Inputs are the same NumPy float32
arrays, and before timing each library's result is checked against invarax's
(float32 tolerance). invarax and JAX run under `jit`; PyTorch runs eagerly, with
`torch.func` (`grad`, `vmap`, `jacfwd`, `jacrev`) and `torch.compile` for the two jit
rows (reset before each first call, so it compiles again; its on-disk caches stay
warm); autograd runs eagerly on NumPy and has no jit, vmap or jacfwd ({DASH}; its
`jacobian` is reverse mode). The first-call row makes a fresh function object each
time, so nothing is cached; invarax's jit traces the function, optimises the program
(CSE, DCE, constant folding, elementwise fusion) and generates a Python function calling
the same kernels as eager evaluation (no machine code), so its first call costs little
more than a cached one. The dispatch row times {problems.DISPATCH_CALLS} back-to-back
calls per sample (waiting for the last result) and divides by that. The matmul row gives
GFLOP/s (NumPy's OpenBLAS is the reference limit);
autograd's matmul is NumPy's. The memory row runs one process per library and reports
how far the training loop (compilation included) raises the peak resident set size
above the process's size just before it (`VmHWM` of `/proc/self/status`, reset through
`/proc/self/clear_refs` just before the loop; `getrusage`'s `ru_maxrss` growth where
there is no `/proc`), so every library's allocator, caches and compiler count.
invarax/JAX is invarax's cost over JAX's (time, memory, or JAX's GFLOP/s over
invarax's): above 1, invarax is slower or larger. Thread counts are each library's
default.
{CHART if chart else ""}"""


def chart(rows: list[dict], path) -> None:
    """A horizontal bar chart of the invarax/JAX ratios, saved as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [row for row in rows if row["ratio"] is not None]
    ratios = [row["ratio"] for row in shown]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(shown) + 1.2))
    colors = ["tab:red" if r > 1 else "tab:green" for r in ratios]
    ax.barh(range(len(shown)), [r - 1 for r in ratios], left=1, color=colors)  # from 1 to r
    for i, r in enumerate(ratios):
        ax.annotate(f"{r:.2g}", (r, i), xytext=(3 if r > 1 else -3, 0),
                    textcoords="offset points", ha="left" if r > 1 else "right",
                    va="center", fontsize=8)  # fmt: skip
    ax.set_yticks(range(len(shown)), [row["label"] for row in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    span = 1.5 * max(max(ratios), 1 / min(ratios))
    ax.set_xlim(1 / span, span)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("invarax cost / JAX cost (log scale): right of 1, invarax is slower or larger")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
