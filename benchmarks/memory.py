"""Peak memory of a training loop, measured in a fresh process per library.

``python -m benchmarks.memory LIB CONFIG_JSON`` imports library ``LIB``, makes the
inputs of the training step and prints, in MB, how far the loop of ``cfg.steps`` steps
(compilation included) raises the process's peak resident set size above its size
just before the loop. On Linux the peak (``VmHWM`` of ``/proc/self/status``) is reset first
(``/proc/self/clear_refs``), so that earlier transient allocations (imports, inputs)
cannot hide the loop's; elsewhere it is the growth of ``getrusage``'s ``ru_maxrss``.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import subprocess
import sys
from pathlib import Path

from . import peers, problems


def _peak_kb() -> float:
    # Linux: the peak of this process image (getrusage's ru_maxrss would include the
    # forking parent's, which survives exec); elsewhere ru_maxrss.
    try:
        with open("/proc/self/status") as f:
            return float(next(line.split()[1] for line in f if line.startswith("VmHWM:")))
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1024 if sys.platform == "darwin" else peak  # macOS reports bytes


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def measure(name: str, cfg: problems.Config) -> float:
    """MB by which ``cfg.steps`` training steps raise the peak RSS, in a new process."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", name, json.dumps(dataclasses.asdict(cfg))],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(proc.stdout.split()[-1])


def main(argv=None) -> None:
    name, cfg_json = sys.argv[1:] if argv is None else argv
    fields = json.loads(cfg_json)
    cfg = problems.Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    workloads, _ = peers.load(name, cfg)
    loop = workloads["train_loop"]()
    _reset_peak()
    before = _peak_kb()
    loop()
    print((_peak_kb() - before) / 1024)


if __name__ == "__main__":
    main()
