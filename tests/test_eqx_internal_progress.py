"""``equinox.internal``'s progress meters: ``NoProgressMeter``, ``TextProgressMeter`` and
``TqdmProgressMeter``.

Each program runs on invarax and on Equinox 0.13.8 (skipped when absent) and prints the
same lines, eagerly and under ``jit``, ``vmap`` (one line per step for the whole batch:
the slowest example's progress), ``grad``, ``lax.scan`` and ``lax.while_loop``.
"""

import importlib.util
import re
import types

import numpy as np
import pytest

import invarax
import invarax.module.internal as eqxi
import invarax.numpy as jnp

OURS = types.SimpleNamespace(jax=invarax, jnp=jnp, eqxi=eqxi)


@pytest.fixture(scope="module")
def theirs():
    pytest.importorskip("equinox.internal")
    import equinox.internal
    import jax

    return types.SimpleNamespace(jax=jax, jnp=jax.numpy, eqxi=equinox.internal)


def _scan_solve(lib, meter, steps, speed=False):
    """A solve of ``steps`` steps under ``lax.scan``; with ``speed`` the progress of
    example ``x`` is ``(1 + x)`` times faster (so it depends on a batched value)."""
    jnp = lib.jnp

    def solve(x):
        state = meter.init()

        def body(state, i):
            progress = (i + 1) / steps
            if speed:
                progress = jnp.minimum(progress * (1 + x), 1.0)
            return meter.step(state, progress), None

        state, _ = lib.jax.lax.scan(body, state, jnp.arange(steps))
        meter.close(state)
        return x * x

    return solve


def _while_solve(lib, meter):
    """A solve under ``lax.while_loop`` whose progress grows by ``x / 4`` a step (under
    ``vmap`` its predicate is batched)."""
    jnp = lib.jnp

    def solve(x):
        def body(carry):
            progress, state = carry
            progress = jnp.minimum(progress + 0.25 * x, 1.0)
            return progress, meter.step(state, progress)

        carry = (jnp.asarray(0.0), meter.init())
        progress, state = lib.jax.lax.while_loop(lambda c: c[0] < 1.0, body, carry)
        meter.close(state)
        return progress

    return solve


def _text(lib, minimum_increase=0.0999):
    return lib.eqxi.TextProgressMeter(minimum_increase=minimum_increase)


PROGRAMS = {
    "eager": lambda lib: _scan_solve(lib, _text(lib), 5)(1.0),
    "jit": lambda lib: lib.jax.jit(_scan_solve(lib, _text(lib), 5))(1.0),
    "vmap": lambda lib: lib.jax.vmap(_scan_solve(lib, _text(lib), 10))(lib.jnp.arange(3.0)),
    "vmap_batched_progress": lambda lib: lib.jax.vmap(_scan_solve(lib, _text(lib), 10, True))(
        lib.jnp.array([0.0, 1.0, 0.5])),
    "jit_vmap_batched_progress": lambda lib: lib.jax.jit(lib.jax.vmap(
        _scan_solve(lib, _text(lib), 10, True)))(lib.jnp.array([0.0, 1.0, 0.5])),
    "grad": lambda lib: lib.jax.grad(_scan_solve(lib, _text(lib), 4))(lib.jnp.asarray(0.5)),
    "jit_grad": lambda lib: lib.jax.jit(lib.jax.grad(_scan_solve(lib, _text(lib), 4)))(
        lib.jnp.asarray(0.5)),
    "vmap_while": lambda lib: lib.jax.vmap(_while_solve(lib, _text(lib)))(
        lib.jnp.array([0.25, 0.5, 1.0])),
    "jit_vmap_while": lambda lib: lib.jax.jit(lib.jax.vmap(_while_solve(lib, _text(lib))))(
        lib.jnp.array([0.25, 0.5, 1.0])),
    "default_increase": lambda lib: lib.jax.jit(
        _scan_solve(lib, lib.eqxi.TextProgressMeter(), 3))(1.0),
    "closed_early": lambda lib: lib.jax.jit(_closed_early(lib))(1.0),
    "none": lambda lib: lib.jax.jit(lib.jax.vmap(
        _scan_solve(lib, lib.eqxi.NoProgressMeter(), 4, True)))(lib.jnp.arange(2.0)),
}


def _closed_early(lib):
    meter = lib.eqxi.TextProgressMeter()

    def solve(x):
        meter.close(meter.step(meter.init(), 0.5))
        return x

    return solve


def _captured(lib, program, capfd):
    """What running ``program(lib)`` writes: ``(stdout, stderr)``."""
    capfd.readouterr()
    program(lib)
    lib.jax.effects_barrier()
    captured = capfd.readouterr()
    return captured.out, captured.err


def _printed(lib, program, capfd):
    out, err = _captured(lib, program, capfd)
    assert err == ""
    return out


def _lines(*percentages):
    return "".join(f"{p:.2f}%\n" for p in percentages)


@pytest.mark.parametrize("name", PROGRAMS)
def test_text_meter_prints_as_equinox(name, theirs, capfd):
    assert _printed(OURS, PROGRAMS[name], capfd) == _printed(theirs, PROGRAMS[name], capfd)


EXPECTED = {
    "eager": _lines(0, 20, 40, 60, 80, 100),
    "jit_grad": _lines(0, 25, 50, 75, 100),
    # The slowest example (x = 0) sets the pace: one line per step, not one per example.
    "jit_vmap_batched_progress": _lines(*range(0, 101, 10)),
    # Progress 0.0625 a step for the slowest: a line every other step (more than 0.0999).
    "jit_vmap_while": _lines(*np.arange(0, 101, 12.5)),
    "default_increase": _lines(0, 100 / 3, 200 / 3, 100),
    "closed_early": _lines(0, 50, 100),
    "none": "",
}


@pytest.mark.parametrize("name", EXPECTED)
def test_text_meter_prints(name, capfd):
    assert _printed(OURS, PROGRAMS[name], capfd) == EXPECTED[name]


def test_progress_may_depend_on_what_is_differentiated(capfd):
    """Equinox raises (``unvmap_max`` has no derivative); invarax displays the progress
    without its derivative."""
    solve = _scan_solve(OURS, _text(OURS), 4, speed=True)
    capfd.readouterr()
    g = invarax.jit(invarax.grad(solve))(jnp.asarray(0.5))
    assert capfd.readouterr().out == _lines(0, 37.5, 75, 100, 100)  # at 1: a line each step
    assert np.asarray(g) == np.float32(1.0)
    g = invarax.vmap(invarax.grad(solve))(jnp.array([0.0, 1.0]))
    assert capfd.readouterr().out == _lines(0, 25, 50, 75, 100)
    assert np.array_equal(g, np.array([0.0, 2.0], np.float32))


def test_meters_are_modules_passed_through_filter_jit(capfd):
    meter = _text(OURS, 0.3)
    run = invarax.filter_jit(lambda meter, x: _scan_solve(OURS, meter, 4)(x))
    capfd.readouterr()
    assert np.asarray(run(meter, jnp.asarray(3.0))) == 9.0
    assert capfd.readouterr().out == _lines(0, 50, 100)


def test_abstract_meter_and_a_custom_one(capfd):
    with pytest.raises(TypeError, match="abstract"):
        eqxi.AbstractProgressMeter()

    class Counter(eqxi.AbstractProgressMeter):
        def init(self):
            return jnp.asarray(0)

        def step(self, state, progress):
            return state + 1

        def close(self, state):
            invarax.debug.print("{} steps", state)

    program = lambda lib: lib.jax.jit(_scan_solve(lib, Counter(), 6))(1.0)  # noqa: E731
    assert _printed(OURS, program, capfd) == "6 steps\n"


# ---------------------------------------------------------------------------------------
# tqdm


def _frames(err):
    """The bar's successive frames, its times removed, each once (tqdm draws a frame
    twice when enough time has passed since the last)."""
    frames = [re.sub(r"\[.*\]", "[time]", f).strip() for f in err.split("\r") if f.strip()]
    return [f for i, f in enumerate(frames) if i == 0 or f != frames[i - 1]]


def _bar_frames(lib, program, capfd):
    out, err = _captured(lib, program, capfd)
    assert out == ""
    return _frames(err)


TQDM_PROGRAMS = {
    "jit": lambda lib: lib.jax.jit(_scan_solve(
        lib, lib.eqxi.TqdmProgressMeter(refresh_steps=3), 10))(1.0),
    "jit_vmap_batched_progress": lambda lib: lib.jax.jit(lib.jax.vmap(_scan_solve(
        lib, lib.eqxi.TqdmProgressMeter(refresh_steps=3), 10, True)))(
            lib.jnp.array([0.0, 1.0, 0.5])),
    "vmap_while": lambda lib: lib.jax.vmap(_while_solve(
        lib, lib.eqxi.TqdmProgressMeter(refresh_steps=3)))(lib.jnp.array([0.25, 0.5, 1.0])),
    "grad": lambda lib: lib.jax.grad(_scan_solve(
        lib, lib.eqxi.TqdmProgressMeter(refresh_steps=5), 20))(lib.jnp.asarray(2.0)),
}


@pytest.mark.parametrize("name", TQDM_PROGRAMS)
def test_tqdm_meter_draws_as_equinox(name, theirs, capfd):
    pytest.importorskip("tqdm")
    ours = _bar_frames(OURS, TQDM_PROGRAMS[name], capfd)
    assert ours == _bar_frames(theirs, TQDM_PROGRAMS[name], capfd)


def test_tqdm_meter_refreshes_every_refresh_steps(capfd):
    pytest.importorskip("tqdm")
    frames = _bar_frames(OURS, TQDM_PROGRAMS["jit_vmap_batched_progress"], capfd)
    # Opened at 0, refreshed at steps 0, 3, 6, 9 (the slowest example's progress), closed.
    shown = [f.split("|")[0] for f in frames]
    assert shown == ["0.00%", "10.00%", "40.00%", "70.00%", "100.00%"]
    assert frames[-1].startswith("100.00%|" + "█" * 10 + "|") or \
        frames[-1].startswith("100.00%|" + "#" * 10 + "|")


def test_tqdm_meter_needs_tqdm(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tqdm" else find_spec(name, *a))
    with pytest.raises(ValueError, match="pip install tqdm"):
        eqxi.TqdmProgressMeter()
