"""``Array``: the base of concrete arrays and tracers, and ``ArrayImpl``, the concrete one.

``isinstance(x, Array)`` is True for both, as with ``jax.Array``. Operators and
methods (``+``, ``.sum()``, ``.at[]``, ...) are installed on ``Array`` by
``invarax.numpy``, so concrete arrays and tracers share one implementation.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .aval import ShapedArray


class Array:
    """An immutable n-dimensional array (concrete, or a tracer inside a transformation)."""

    __slots__ = ()
    __array_priority__ = 100  # NumPy defers ``ndarray + Array`` to ``Array.__radd__``.

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array (shape ()); it has no length")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array (shape ())")
        return (self[i] for i in range(self.shape[0]))

    def __setitem__(self, index, value):
        raise TypeError(
            "invarax arrays are immutable, so item assignment is not supported. "
            "Use x = x.at[index].set(value) (or .add/.multiply/.min/.max) instead."
        )

    __hash__ = None  # Arrays are unhashable, as NumPy's and JAX's.


class ArrayImpl(Array):
    """A concrete array that owns a read-only NumPy buffer.

    Arguments:
        value: a NumPy array of a canonical dtype (``invarax.numpy.asarray`` converts
            anything else; this constructor trusts its input).
        weak_type: whether the value came from a Python scalar.

    Example:
        >>> import invarax.numpy as jnp
        >>> jnp.arange(3.0)
        Array([0., 1., 2.], dtype=float32)
    """

    __slots__ = ("_value", "_weak_type", "_aval", "_sharding", "_buffer", "_buffer_device")

    def __init__(self, value: np.ndarray, weak_type: bool = False):
        value = np.asarray(value)
        if value.flags.writeable:
            value.flags.writeable = False
        self._value = value
        self._weak_type = weak_type
        self._aval = None
        self._sharding = None  # where it lives, once placed (a ``core.sharding.Sharding``)
        self._buffer = None  # its value in an accelerator's memory, if it has been there

    @classmethod
    def on_device(cls, buffer, device, aval: ShapedArray) -> ArrayImpl:
        """An array whose value is ``buffer`` in the memory of the accelerator ``device``
        (an object with ``to_host(buffer)``); the host copy (``_value``) is made when
        first read."""
        out = cls.__new__(cls)
        out._weak_type, out._aval, out._sharding = aval.weak_type, aval, None
        out._buffer, out._buffer_device = buffer, device
        return out

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            aval = self._aval = ShapedArray(self._value.shape, self._value.dtype, self._weak_type)
        return aval

    # (through the aval: the value of an array on an accelerator is not read to know them)
    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self._weak_type

    def __array__(self, dtype=None, copy=None):
        # As JAX: always a C-contiguous array (the buffer may be a strided view, e.g. of
        # a vmap output), so ``.view(dtype)`` and the buffer protocol work on it.
        if copy:
            return np.array(self._value, dtype=dtype, order="C")
        value = self._value if dtype is None else self._value.astype(dtype, copy=False)
        if not value.flags.c_contiguous:
            value = np.array(value, order="C")
            value.flags.writeable = False  # read-only, as the array's own buffer
        return value

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if not dtypes.is_integer(self.dtype) and self.dtype != dtypes.bool_:
            raise TypeError(
                f"only integer arrays can be used as an index, got dtype {self.dtype}; "
                "convert with .astype(int)"
            )
        return int(self._value)

    def item(self, *args):
        """The value as a Python scalar (optionally of one element: ``x.item(i)``)."""
        return self._value.item(*args)

    def tolist(self):
        """The value as nested Python lists."""
        return self._value.tolist()

    def block_until_ready(self):
        """Wait until the value is computed (on the CPU it always is) and return it."""
        if self._on_accelerator():
            self._buffer_device.synchronize()
        return self

    def _on_accelerator(self) -> bool:
        """Whether the array was computed on an accelerator and has no host copy yet."""
        return self._buffer is not None and not _has_slot(self, "_value")

    def copy(self):
        """A copy of the array (arrays are immutable, so this is rarely needed)."""
        if self._on_accelerator():
            out = ArrayImpl.on_device(self._buffer.copy(), self._buffer_device, self.aval)
            out._sharding = self._sharding
            return out
        return ArrayImpl(self._value.copy(), self._weak_type)

    def unsafe_buffer_pointer(self) -> int:
        """The address of the array's memory, as JAX's (to check that a donated buffer was
        reused, say); a deleted array raises."""
        if self._on_accelerator():
            return self._buffer.data.ptr
        return self._value.__array_interface__["data"][0]

    def delete(self):
        """Release the buffer; any later use raises (what donating the array to jit does)."""
        if not self.is_deleted():
            self._aval = self.aval  # kept for the error message
            if _has_slot(self, "_value"):
                del self._value
            self._buffer = _DELETED

    def is_deleted(self) -> bool:
        """Whether ``delete()`` ran (e.g. the array was donated through ``donate_argnums``)."""
        return self._buffer is _DELETED or (self._buffer is None
                                            and not _has_slot(self, "_value"))

    def __getattr__(self, name):
        # Only reached for an unset slot: ``_value`` of an array computed on an accelerator
        # (copied to the host on first read), or after ``delete()``.
        if name == "_value":
            buffer = self._buffer
            if buffer is not None and buffer is not _DELETED:
                value = self._buffer_device.to_host(buffer)
                value.flags.writeable = False
                self._value = value
                return value
            raise RuntimeError(
                f"Array has been deleted with shape={self._aval.str_short()}: it was donated to "
                "a jitted function (jit(..., donate_argnums=...)) or deleted, and its buffer may "
                "have been reused. Do not use an array after donating it: donate only values "
                "you no longer need (x = f(x)), or remove it from donate_argnums."
            )
        raise AttributeError(f"'ArrayImpl' object has no attribute {name!r}")

    def __repr__(self):
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self._weak_type else ""
        return f"Array({body}, dtype={self.dtype.name}{weak})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (ArrayImpl, (np.array(self._value), self._weak_type))


_DELETED = object()  # the buffer of a deleted array


def _has_slot(x: ArrayImpl, name: str) -> bool:
    """Whether the slot ``name`` of ``x`` is set (read without ``__getattr__``)."""
    try:
        getattr(ArrayImpl, name).__get__(x)
    except AttributeError:
        return False
    return True


_PY_SCALARS = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    """Whether ``x`` is a Python bool/int/float/complex (weakly typed); NumPy scalars are not."""
    return isinstance(x, _PY_SCALARS) and not isinstance(x, np.generic)


def concrete_scalar(x) -> ArrayImpl:
    """A 0-d array for a Python scalar: weakly typed, except for bools (``2.0`` -> weak f32[])."""
    dtype = dtypes.scalar_dtype(x)
    try:
        value = np.asarray(x, dtype=dtype)
    except OverflowError:
        raise OverflowError(
            f"Python int {x} is too large for {dtype}; pass an explicit dtype "
            "(and enable x64 with config.update('jax_enable_x64', True) for 64-bit ints)"
        ) from None
    return ArrayImpl(value, not isinstance(x, bool))


def to_array(x, what: str = "argument") -> Array:
    """``x`` as an invarax ``Array``: Arrays and tracers pass; scalars and NumPy arrays convert.

    NumPy inputs are copied (arrays are immutable) and their dtype canonicalised.
    Anything else (lists, strings, objects) raises a TypeError that names ``what``.
    """
    if isinstance(x, Array):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return ArrayImpl(np.array(x, dtype=dtypes.canonicalize(x.dtype)))
    if isinstance(x, _PY_SCALARS):
        return concrete_scalar(x)
    kind = type(x).__name__
    hint = (
        "convert it with jnp.asarray(...) first"
        if isinstance(x, (list, tuple))
        else "pass a number or an array"
    )
    raise TypeError(f"{what} must be an array or a scalar, got {kind} {_short_repr(x)}; {hint}")


# Smaller arrays are copied: their copy (under 2 us) costs less than checking that no
# result of the call shares their memory.
BORROW_MIN_BYTES = 1 << 16


def borrow(x: np.ndarray) -> ArrayImpl | None:
    """An ``Array`` viewing the NumPy array ``x``'s memory without a copy, or None.

    Only a plain ``ndarray`` of at least ``BORROW_MIN_BYTES`` that is C-contiguous,
    aligned, in native byte order and of its canonical dtype (``to_array`` would not
    convert it) is borrowed; the view is read-only, ``x`` itself keeps its flags. The
    result is immutable only while the owner of ``x`` leaves it alone, so it must not
    outlive one computation: ``jit`` borrows for an eager call and copies any output
    that shares ``x``'s memory.
    """
    if not (type(x) is np.ndarray and x.nbytes >= BORROW_MIN_BYTES and x.flags.c_contiguous
            and x.flags.aligned and x.dtype.isnative
            and dtypes.canonicalize(x.dtype) == x.dtype):
        return None
    view = x.view()
    view.flags.writeable = False
    return ArrayImpl(view)


def _short_repr(x) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."
