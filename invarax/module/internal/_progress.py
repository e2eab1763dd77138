"""Equinox's progress meters: ``NoProgressMeter``, ``TextProgressMeter`` and
``TqdmProgressMeter``, which show how far an iterative solve has gone while it runs.

A meter's state is a pytree of arrays, so ``init``/``step``/``close`` run eagerly and
inside ``jit``, ``scan``, ``while_loop``, ``grad`` and ``vmap``. The display itself lives on
the host: ``init`` opens a display through an ``io_callback`` that returns its number,
``step`` updates it through another and ``close`` finishes it. Under ``vmap`` every
callback sees one value for the whole batch (the slowest example's progress, the meter's
number through ``unvmap_max``), so a batched solve shows one meter, not one per example.
"""

from __future__ import annotations

import abc
import importlib.util
import threading

import numpy as np

from ... import numpy as jnp
from ...core.aval import ShapeDtypeStruct
from ...lax import cond, stop_gradient
from ...transforms._callbacks import io_callback
from .._module import Module
from ._nontraceable import nonbatchable
from ._unvmap import unvmap_all, unvmap_max, unvmap_max_p


def _shown(progress):
    """``progress`` as an array of the default float dtype, without derivative (it is
    only displayed, so a solve may differentiate what its progress depends on)."""
    return stop_gradient(jnp.asarray(progress, float))


class _Displays:
    """The open displays on the host, by number (an int32 that the traced state carries)."""

    def __init__(self):
        self._last = 0
        self._open = {}
        self._lock = threading.Lock()  # callbacks may run on a device's worker thread

    def open(self, make):
        """An int32 scalar: the number of a new display made by ``make()`` when this runs."""
        def _open():
            with self._lock:
                display = make()
                self._last += 1
                self._open[self._last] = display
                return np.int32(self._last)

        return nonbatchable(io_callback(_open, ShapeDtypeStruct((), np.int32)))

    def update(self, show, progress, number):
        """``show(display, progress)`` on display ``number``; returns ``number``, so that
        the next update is ordered after this one through the state."""
        def _update(p, n):
            with self._lock:
                display = self._open.get(int(n))
            if display is not None:  # None: the display was already closed
                show(display, float(p))
            return n

        # One call for the whole batch: the slowest example's progress.
        slowest = -unvmap_max_p.bind(-_shown(progress))
        number = unvmap_max(number)
        return io_callback(_update, ShapeDtypeStruct((), np.int32), slowest, number)

    def close(self, finish, number):
        """``finish(display)`` on display ``number``, then forget it."""
        def _close(n):
            with self._lock:
                display = self._open.pop(int(n), None)
            if display is not None:
                finish(display)

        io_callback(_close, None, unvmap_max(number))


_displays = _Displays()


class AbstractProgressMeter(Module):
    """A progress meter: shows how far an iterative solve has gone, as it runs.

    Subclasses define ``init``, ``step`` and ``close``; the state they pass along is a
    pytree of arrays, carried through the solve's loop.
    """

    @abc.abstractmethod
    def init(self):
        """The state of a new meter (and the meter shown, at 0%)."""

    @abc.abstractmethod
    def step(self, state, progress):
        """Show ``progress`` (a scalar in ``[0, 1]``); returns the next state."""

    @abc.abstractmethod
    def close(self, state):
        """Finish the meter (at 100%); returns ``None``."""


class NoProgressMeter(AbstractProgressMeter):
    """Shows nothing: the meter to pass when no progress should be displayed.

    Example:
        >>> meter = NoProgressMeter()
        >>> meter.close(meter.step(meter.init(), 0.5))
    """

    def init(self):
        return None

    def step(self, state, progress):
        return state

    def close(self, state):
        return None


class _TextState(Module):
    progress: object
    number: object


def _print_progress(display, progress):
    display[0] = progress
    print(f"{100 * progress:.2f}%")


def _print_start():
    print("0.00%")
    return [0.0]


def _print_end(display):
    if display[0] != 1:
        print("100.00%")


class TextProgressMeter(AbstractProgressMeter):
    """Prints the progress as a percentage, one line each time it has grown by more
    than ``minimum_increase`` (and at 100%).

    Arguments:
        minimum_increase: the growth of the progress (from 0 to 1) since the last line
            printed that prints a new one; ``0.02`` by default (every 2%).

    Example:
        >>> meter = TextProgressMeter(minimum_increase=0.3)
        >>> def solve(x):
        ...     state = meter.init()
        ...     def body(state, i):
        ...         return meter.step(state, (i + 1) / 4), None
        ...     state, _ = lax.scan(body, state, jnp.arange(4))
        ...     meter.close(state)
        ...     return x
        >>> _ = jit(solve)(1.0)
        0.00%
        50.00%
        100.00%
    """

    minimum_increase: float = 0.02

    def init(self):
        return _TextState(progress=jnp.asarray(0.0, float),
                          number=_displays.open(_print_start))

    def step(self, state, progress):
        progress = _shown(progress)
        # Under vmap both are batched; print when every example has moved on enough.
        grown = (progress - state.progress > self.minimum_increase) | (progress == 1)
        shown, number = cond(
            nonbatchable(unvmap_all(grown)),
            lambda n: (progress, _displays.update(_print_progress, progress, n)),
            lambda n: (state.progress, n),
            state.number)
        return _TextState(progress=shown, number=number)

    def close(self, state):
        _displays.close(_print_end, state.number)


class _TqdmState(Module):
    number: object
    step: object


_TQDM_FORMAT = "{percentage:.2f}%|{bar}| [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def _tqdm_start():
    import tqdm

    return tqdm.tqdm(total=100, unit="%", bar_format=_TQDM_FORMAT)


def _tqdm_show(bar, progress):
    bar.n = round(100 * progress, 2)
    bar.update(n=0)
    bar.refresh()


def _tqdm_end(bar):
    bar.n = 100.0
    bar.update(n=0)
    bar.close()


class TqdmProgressMeter(AbstractProgressMeter):
    """A ``tqdm`` progress bar (on standard error), refreshed every ``refresh_steps``
    steps. Needs ``tqdm`` (``pip install tqdm``).

    Arguments:
        refresh_steps: the number of steps between two refreshes of the bar (each is a
            call back into Python); ``20`` by default.

    Raises:
        ValueError: when ``tqdm`` is not installed.
    """

    refresh_steps: int = 20

    def __check_init__(self):
        if importlib.util.find_spec("tqdm") is None:
            raise ValueError("TqdmProgressMeter needs tqdm, which is not installed: "
                             "`pip install tqdm`, or use TextProgressMeter")

    def init(self):
        return _TqdmState(number=_displays.open(_tqdm_start), step=jnp.asarray(0, np.int32))

    def step(self, state, progress):
        # Under vmap an example that has finished stops counting its steps: the batch
        # has made as many steps as its furthest example.
        number = cond(
            nonbatchable(unvmap_max(state.step) % self.refresh_steps == 0),
            lambda n: _displays.update(_tqdm_show, progress, n),
            lambda n: n,
            state.number)
        return _TqdmState(number=number, step=state.step + 1)

    def close(self, state):
        _displays.close(_tqdm_end, state.number)
