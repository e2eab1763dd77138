"""Resume invariance: a training run SIGKILLed at a random step and resumed from its last
checkpoint ends with parameters bitwise equal to the uninterrupted run.

``INVARAX_RESUME_RUNS=200 python -m pytest tests/test_resume.py`` runs the long version.
"""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "scripts" / "resume_train.py"
STEPS = 40
RUNS = int(os.environ.get("INVARAX_RESUME_RUNS", "3"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _train(directory, kill_at=None, delay=0.0):
    """Run the script to the end, or SIGKILL it ``delay`` s after it prints step ``kill_at``.
    Returns whether it was killed."""
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(directory), str(STEPS)],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if kill_at is not None and line.strip() == f"step {kill_at}":
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=60)
                return True
        assert proc.wait(timeout=120) == 0
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    directory = tmp_path_factory.mktemp("uninterrupted")
    _train(directory)
    return (directory / "final.eqx").read_bytes()


@pytest.mark.parametrize("run", range(RUNS))
def test_killed_and_resumed_run_is_bitwise_the_uninterrupted_one(tmp_path, reference, run):
    rng = random.Random(run)
    kills = 0
    while True:  # kill once or twice, at random steps and random moments within a step
        killed = _train(tmp_path, kill_at=rng.randrange(1, STEPS), delay=rng.random() * 0.01) \
            if kills < 1 + run % 2 else _train(tmp_path)
        if not killed:
            break
        kills += 1
    assert (tmp_path / "final.eqx").read_bytes() == reference
    # a kill during a write may leave that write's temporary file, never a damaged ckpt.eqx
    names = sorted(n for n in os.listdir(tmp_path) if not n.endswith(".tmp"))
    assert names == ["ckpt.eqx", "final.eqx"]


def test_a_run_killed_before_its_first_checkpoint_starts_afresh(tmp_path, reference):
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(tmp_path), str(STEPS)],
                            cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    _train(tmp_path)
    assert (tmp_path / "final.eqx").read_bytes() == reference
