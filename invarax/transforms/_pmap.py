"""``pmap``: map a function over devices, each device computing its slice on its own thread.

The body is traced once per signature and jit-compiled (it is a ``jit`` of the per-device
function, traced with the axis name bound to the device count); each local device runs the
compiled program on its slice of the arguments, on its own thread with its share of the
kernel threads. Collectives meet at an ``Exchange``: every device's value is gathered in
device order (across processes too, after ``invarax.distributed.initialize()``) and reduced
by the canonical kernels, as ``vmap`` reduces its batch axis.

So ``pmap(f)(x)`` is bitwise ``vmap(f)(x)`` (N1 across devices), whatever the number of
devices and their split into processes (N7). Under ``grad``, ``jit`` or ``vmap`` (whose
tracers reach ``pmap``), ``pmap(f)`` is computed as ``vmap(f)`` over the same axis name:
the same numbers, computed by the enclosing transformation in one process.
"""

from __future__ import annotations

import concurrent.futures
import functools

import numpy as np

from ..compiler.jit import Jitted
from ..core.api_util import StaticArgs, flatten_args, fun_name
from ..core.array import ArrayImpl
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Tracer
from ..distributed import devices as _devices
from ..distributed.shardings import PmapSharding
from ..kernels._support import capped_threads
from ..ops._device_axes import DeviceAxis, DeviceFailure, Exchange, bound
from ..ops._util import canonicalize_axis
from ._vmap import _broadcast_prefix, vmap


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Map ``fun`` over the leading (``in_axes``) axis of its arguments, one slice per device.

    Arguments:
        fun: a function of arrays (pytrees allowed).
        axis_name: a name for the mapped axis, for collectives (``lax.psum``, ...).
        in_axes: an int, None, or a pytree prefix of the positional arguments (a tuple
            with one entry per argument): the mapped axis of each input (None: the same
            value on every device). Keyword arguments are mapped over axis 0.
        out_axes: the same for the outputs (None: an output that is the same on every
            device, returned once).
        static_broadcasted_argnums: positional arguments passed to every device as Python
            values (hashed, as jit's static arguments).
        devices: the devices to run on (default: this process's first ones).
        backend: ``"cpu"`` or None.
        axis_size: the size of the mapped axis when no input is mapped (else it comes from
            the arguments; JAX requires a mapped input, invarax goes beyond).
        donate_argnums: positional arguments whose arrays are deleted after the call.
        global_arg_shapes: unsupported (must be None), as in current JAX.

    Returns:
        The mapped function. Slice ``i`` of each output is bitwise ``vmap(fun)``'s row
        ``i`` (and ``fun`` applied to slice ``i`` of the inputs).

    Example:
        >>> invarax.pmap(lambda x: x * 2)(jnp.ones((1, 3)))
        Array([[2., 2., 2.]], dtype=float32)
    """
    if fun is None:
        return functools.partial(
            pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums, devices=devices,
            backend=backend, axis_size=axis_size, donate_argnums=donate_argnums,
            global_arg_shapes=global_arg_shapes)
    if global_arg_shapes is not None:
        raise ValueError("pmap's global_arg_shapes is not supported (as in current JAX)")
    if backend not in (None, "cpu"):
        raise ValueError(f"unknown backend {backend!r}: invarax has the 'cpu' backend only")
    return _Pmapped(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices,
                    donate_argnums, axis_size)


def _as_tuple(argnums) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


class _Pmapped:
    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices_, donate,
                 axis_size=None):
        self.fun = fun
        self.axis_size = axis_size
        self.name = fun_name(fun)
        self.axis_name = axis_name
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        self.static = StaticArgs(fun, _as_tuple(static_argnums))
        self.devices = None if devices_ is None else list(devices_)
        self.donate = _as_tuple(donate)
        # Per device: fun on one slice, jit-compiled (the cache of traced signatures).
        self.body = Jitted(fun, static_argnums=_as_tuple(static_argnums))
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        dims, leaves, in_tree, static_pos = self._dims(args, kwargs)
        size = self._size(leaves, dims)
        local = self._local_devices(size)
        if any(isinstance(x, Tracer) for x in leaves):
            return self._as_vmap(args, kwargs, static_pos)
        total = size * _devices.process_count()
        slices = [self._slice(leaves, dims, j) for j in range(size)]
        dyn_args, dyn_kwargs = tree_unflatten(in_tree, slices[0])
        full_args = self._full(dyn_args, [args[i] for i in static_pos], static_pos)
        with bound(DeviceAxis(self.axis_name, total)):
            entry, _ = self.body._entry(full_args, dyn_kwargs)
        if entry.tracer_consts:  # the body closes over values of an enclosing transformation
            return self._as_vmap(args, kwargs, static_pos)
        outs = self._run(entry, slices, local, total)
        self._delete_donated(args, static_pos)
        return self._stack(outs, entry.out_tree, local)

    # -- arguments ------------------------------------------------------------------------

    def _dims(self, args, kwargs):
        n = len(args)
        static_pos = sorted({i % n for i in self.static.argnums if -n <= i < n})
        dyn = [a for i, a in enumerate(args) if i not in static_pos]
        axes = self.in_axes
        if isinstance(axes, tuple) and len(axes) == n and static_pos:
            axes = tuple(a for i, a in enumerate(axes) if i not in static_pos)
        if isinstance(axes, tuple) and len(axes) != len(dyn):
            raise ValueError(
                f"pmap in_axes must be an int, None, or a tuple with one entry per positional "
                f"argument, but got len(in_axes)={len(axes)} for {len(dyn)} arguments of "
                f"{self.name}"
            )
        leaves, in_tree = flatten_args(tuple(dyn), kwargs, self.name)
        dims = _broadcast_prefix(axes, tuple(dyn), "in_axes", self.fun)
        dims += [0] * (len(leaves) - len(dims))  # keyword arguments: axis 0, as JAX
        dims = [None if d is None else canonicalize_axis(d, x.ndim, f"pmap in_axes {d}")
                for x, d in zip(leaves, dims, strict=True)]
        return dims, leaves, in_tree, static_pos

    def _size(self, leaves, dims) -> int:
        sizes = {x.shape[d] for x, d in zip(leaves, dims, strict=True) if d is not None}
        if not sizes and self.axis_size is not None:
            return self.axis_size
        if not sizes:
            raise ValueError(f"pmap of {self.name} has no mapped input (every in_axes is None): "
                             "pass axis_size=")
        if len(sizes) > 1:
            described = ", ".join(f"{x.shape} (axis {d})"
                                  for x, d in zip(leaves, dims, strict=True) if d is not None)
            raise ValueError(
                f"pmap of {self.name} got inconsistent sizes for the mapped axis: {described}; "
                "every mapped input must have the same size on its in_axes axis"
            )
        return sizes.pop()

    def _local_devices(self, size: int) -> list:
        available = self.devices if self.devices is not None else _devices.local_devices()
        if size > len(available):
            raise ValueError(
                f"pmap of {self.name} maps an axis of size {size}, but only {len(available)} "
                f"device(s) are available. Either ask for more devices before first use, with "
                f"invarax.config.update('jax_num_cpu_devices', {size}), or reshape the data "
                f"to ({len(available)}, {size} // {len(available)}, ...) and vmap inside pmap"
            )
        if _devices.process_count() > 1 and size != _devices.local_device_count():
            raise ValueError(
                f"pmap of {self.name} across {_devices.process_count()} processes maps an axis "
                f"of size {size} in this process, which has {_devices.local_device_count()} "
                "devices: each process passes one slice per local device"
            )
        return available[:size]

    @staticmethod
    def _slice(leaves, dims, j) -> list:
        """Device ``j``'s argument leaves (views of the mapped inputs' slices)."""
        return [x if d is None else ArrayImpl(x._value[(slice(None),) * d + (j,)], x.weak_type)
                for x, d in zip(leaves, dims, strict=True)]

    def _full(self, dyn_args, static_args, static_pos):
        args, it = [], iter(dyn_args)
        n = len(dyn_args) + len(static_pos)
        for i in range(n):
            args.append(static_args[static_pos.index(i)] if i in static_pos else next(it))
        return args

    # -- running --------------------------------------------------------------------------

    def _run(self, entry, slices, local, total):
        from ..distributed import _transport

        exchange = Exchange(len(local), _transport.current())
        threads = _devices.kernel_threads_per_device(len(local))
        first = _devices.process_index() * len(local)  # this process's first axis index

        def work(j, device):
            axis = DeviceAxis(self.axis_name, total, first + j, exchange, j)
            try:
                with capped_threads(threads), bound(axis):
                    return entry.call(slices[j])
            except BaseException:
                exchange.abort()  # release the devices waiting for this one at a collective
                raise

        # Device 0 works on the calling thread: a process with one device (as under MPI)
        # then hands no work between threads, each handoff costing a wake-up that waits for
        # a free core when the cores are busy.
        futures = [device._submit(work, j, device) for j, device in enumerate(local) if j]
        futures.insert(0, concurrent.futures.Future())
        try:
            futures[0].set_result(work(0, local[0]))
        except Exception as error:
            futures[0].set_exception(error)
        concurrent.futures.wait(futures)
        exchange.close()
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            # The failure itself, not a device released from a collective because of it.
            raise next((e for e in errors if not isinstance(e, DeviceFailure)), errors[0])
        return [f.result() for f in futures]

    def _stack(self, outs, out_tree, local):
        per_device = [tree_flatten(o)[0] for o in outs]
        shapes = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        targets = _broadcast_prefix(self.out_axes, shapes, "out_axes", self.fun)
        sharding = PmapSharding(local)
        stacked = []
        for i, target in enumerate(targets):
            values = [leaves[i] for leaves in per_device]
            if target is None:
                stacked.append(values[0])
                continue
            first = values[0]
            target = canonicalize_axis(target, first.ndim + 1, "pmap out_axes")
            stacked_value = (np.expand_dims(first._value, target) if len(values) == 1
                             else np.stack([v._value for v in values], target))
            out = ArrayImpl(stacked_value, first.weak_type)
            out._sharding = sharding
            stacked.append(out)
        return tree_unflatten(out_tree, stacked)

    def _delete_donated(self, args, static_pos):
        n = len(args)
        for i in {i % n for i in self.donate if -n <= i < n} - set(static_pos):
            for leaf in tree_flatten(args[i])[0]:
                if isinstance(leaf, ArrayImpl):
                    leaf.delete()

    # -- under transformations --------------------------------------------------------------

    def _as_vmap(self, args, kwargs, static_pos):
        if _devices.process_count() > 1:
            raise NotImplementedError(
                f"pmap of {self.name} under grad, jit or vmap in a run of several processes: "
                "the enclosing transformation would see this process's slices only. Put the "
                "transformation inside pmap (pmap(grad(loss)), as data-parallel training does)"
            )
        static_args = [args[i] for i in static_pos]
        dyn = [a for i, a in enumerate(args) if i not in static_pos]

        def body(*dyn_args, **kw):
            return self.fun(*self._full(dyn_args, static_args, static_pos), **kw)

        axes = self.in_axes
        if isinstance(axes, tuple) and len(axes) == len(args) and static_pos:
            axes = tuple(a for i, a in enumerate(axes) if i not in static_pos)
        return vmap(body, in_axes=axes, out_axes=self.out_axes, axis_name=self.axis_name)(
            *dyn, **kwargs)
