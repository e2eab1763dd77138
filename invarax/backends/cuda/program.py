"""A program (a ``jit`` call's body) on the GPU: the CPU's optimised program, its fusion
groups as generated kernels and its other equations by their GPU rules.

The program is the one the CPU runs (``compiler.optimize``), planned into fusion groups
by the CPU's planner with every group size let in: a GPU kernel launch costs the same for
ten elements or ten million. Each group the CUDA generator can write
(``compiler/fusion_cuda.py``: chains of elementwise members, and the row reductions that
end them) runs as one kernel, which gives the unfused members' bits; any other group runs
member by member, and every other equation is bound, so it runs by its own GPU rule (or
on the host, with a warning, where it has none). Values stay in device memory throughout.
"""

from __future__ import annotations

import functools
import math

from ...compiler import c_forms, fusion, fusion_cuda
from ...compiler.passes import optimize
from ...core import backends
from ...core.array import ArrayImpl
from ...core.ir import ClosedJaxpr, Literal
from ...distributed.shardings import on_device
from ...kernels import cuda
from .runner import NotOnDevice, require_exact_elementary

#: The planner's sizes for the GPU: every group is worth its one kernel.
SIZES = {"min_size": 1, "min_work": 0, "min_row_size": 1}


class Program:
    """``closed`` made ready to run on a GPU (see the module docstring)."""

    def __init__(self, closed: ClosedJaxpr):
        opt = optimize(closed)
        self.jaxpr, self.consts = opt.jaxpr, opt.consts
        self.items = []  # (group, kernel) or an equation
        for item in fusion.plan(self.jaxpr, sizes=SIZES):
            if isinstance(item, fusion.Group):
                try:
                    self.items.append((item, fusion_cuda.group_kernel(item)))
                    continue
                except c_forms.Unsupported:
                    self.items += [*item.eqns, *item.reductions]
                    continue
            self.items.append(item)
        # the equations whose outputs only groups read as scalars (not computed by the plan)
        self.producers = {id(v): e for e in self.jaxpr.eqns for v in e.outvars}

    def __call__(self, device, args) -> list:
        """The outputs of the program on ``args`` (concrete arrays), run on ``device``."""
        env = {}
        for v, x in zip((*self.jaxpr.constvars, *self.jaxpr.invars), (*self.consts, *args),
                        strict=True):
            env[id(v)] = x

        def read(v):
            if isinstance(v, Literal):
                return v.val
            if id(v) not in env:  # a broadcast the plan left to the groups that read it
                run(self.producers[id(v)])
            return env[id(v)]

        def run(eqn):
            outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            outs = outs if eqn.primitive.multiple_results else (outs,)
            env.update((id(v), o) for v, o in zip(eqn.outvars, outs, strict=True))

        for item in self.items:
            if isinstance(item, tuple):
                group, kernel = item
                try:
                    if kernel.uses_elementary:
                        require_exact_elementary("a fusion group")
                except NotOnDevice:  # (its members then run on the host, one by one)
                    for eqn in (*group.eqns, *group.reductions):
                        run(eqn)
                else:
                    env.update(_launch(group, kernel, [read(v) for v in group.invars], device))
            else:
                run(item)
        return [read(v) for v in self.jaxpr.outvars]


def _launch(group, kernel, values: list, device) -> dict:
    """Run ``group``'s kernel on ``values`` (its invars' arrays) on ``device``: ``id(var) ->
    array`` of its outputs."""
    cupy = cuda._cupy()
    size = math.prod(group.shape)
    with device.context():
        ins = [on_device(x, device) for x in values]
        outs = [cupy.empty(v.aval.shape, v.aval.dtype) for v in group.outvars]
        if size:
            scratch = [cupy.empty(group.shape, t) for t in kernel.scratch]
            n = size // group.row_length() if kernel.per_row else size
            cuda.group(kernel.source, ins, outs, n, scratch)
    return {id(v): ArrayImpl.on_device(o, device, v.aval)
            for v, o in zip(group.outvars, outs, strict=True)}


@functools.lru_cache(maxsize=4096)
def program(closed: ClosedJaxpr) -> Program:
    """The GPU program of ``closed`` (made once)."""
    return Program(closed)


backends.CACHES.append(program)
