"""Array creation with numpy's names and MXNet 2's defaults: ``array``,
``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``eye``
and the ``*_like`` functions.

``device=`` (or MXNet's ``ctx=``) names the device; the default is
``nbdl.current_device()``.  The dtype defaults to float32 (as in MXNet's
``np`` module, not numpy's float64/int64), except that ``array`` keeps the
dtype of an NDArray or numpy-array source.  ``zeros_like`` / ``ones_like`` /
``full_like`` also take a Symbol and then add graph nodes.
"""
import numpy as np

from ..dtype import as_dtype
from ..errors import AttrError, ShapeError
from ..ndarray.ndarray import NDArray
from ._dispatch import apply, is_symbol, resolve_device


def _shape(shape, where):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"{where}: shape must be an int or a tuple of ints, got {shape!r}") \
            from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"{where}: negative dimensions are not allowed, got {shape}")
    return shape


def _order(order, where):
    if order not in (None, "C"):
        raise AttrError(f"{where}: order={order!r} is not supported; nbdl arrays are "
                        f"C-contiguous (order='C')")


def _host(values, device):
    # from_numpy makes the copy contiguous (np.ascontiguousarray would turn 0-d into 1-d)
    return NDArray(device.from_numpy(values), device)


def array(object, dtype=None, copy=True, device=None, ctx=None):
    """An NDArray holding a copy of ``object`` (an NDArray, a numpy array,
    nested lists or a scalar).  ``dtype`` defaults to the source's for an
    NDArray or numpy array and to float32 otherwise (a 0-d result for a
    scalar)."""
    dev = resolve_device(device, ctx, "array")
    if isinstance(object, NDArray):
        dt = np.dtype(object.dtype) if dtype is None else as_dtype(dtype)
        if dt != np.dtype(object.dtype):
            converted = object.astype(dt)          # a new array on the source's device
            return converted if converted.device == dev else converted.copyto(dev)
        if not copy and object.device == dev:
            return object
        return object.copyto(dev)
    if is_symbol(object):
        raise ShapeError("array: a Symbol holds no values; use it directly in a graph")
    if dtype is None and isinstance(object, np.ndarray):
        dt = as_dtype(object.dtype)
    else:
        dt = as_dtype(dtype)
    try:
        values = np.array(object, dtype=dt)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"array: cannot make an array of {type(object).__name__} ({e})") from None
    return _host(values, dev)


asarray = array


def empty(shape, dtype=None, order="C", device=None, ctx=None):
    """An uninitialised array (its values are whatever the storage held)."""
    _order(order, "empty")
    dev = resolve_device(device, ctx, "empty")
    return NDArray(dev.empty(_shape(shape, "empty"), as_dtype(dtype)), dev)


def zeros(shape, dtype=None, order="C", device=None, ctx=None):
    """An array of ``shape`` filled with zeros.

    Parameters
    ----------
    shape : int or tuple of int
        The shape.
    dtype : dtype, optional
        float32 by default.
    order : str
        ``'C'`` only.
    device, ctx : Device, optional
        Where it lives (``ctx``: MXNet 1.x's name); the current device by
        default.
    """
    _order(order, "zeros")
    dev = resolve_device(device, ctx, "zeros")
    return NDArray(dev.zeros(_shape(shape, "zeros"), as_dtype(dtype)), dev)


def full(shape, fill_value, dtype=None, order="C", device=None, ctx=None):
    """An array of ``shape`` filled with the scalar ``fill_value``."""
    _order(order, "full")
    dev = resolve_device(device, ctx, "full")
    if isinstance(fill_value, NDArray):
        fill_value = fill_value.asnumpy()
    values = np.full(_shape(shape, "full"), fill_value, dtype=as_dtype(dtype))
    return _host(values, dev)


def ones(shape, dtype=None, order="C", device=None, ctx=None):
    """An array of ``shape`` filled with ones (``zeros``' parameters)."""
    return full(shape, 1, dtype=dtype, order=order, device=device, ctx=ctx)


def arange(start, stop=None, step=1, dtype=None, device=None, ctx=None):
    """``start, start + step, ...`` below ``stop`` (``arange(n)`` is ``0 .. n-1``)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise AttrError("arange: step must not be 0")
    dev = resolve_device(device, ctx, "arange")
    return _host(np.arange(start, stop, step, dtype=np.float64).astype(as_dtype(dtype)), dev)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             device=None, ctx=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (scalars);
    with ``retstep`` also the spacing, as numpy."""
    if axis != 0:
        raise AttrError(f"linspace: axis={axis!r} is not supported (scalar start/stop only, "
                        f"axis=0)")
    if int(num) < 0:
        raise AttrError(f"linspace: num={num} must be non-negative")
    dev = resolve_device(device, ctx, "linspace")
    values, step = np.linspace(float(start), float(stop), int(num), endpoint=endpoint,
                               retstep=True)
    out = _host(values.astype(as_dtype(dtype)), dev)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=None, device=None, ctx=None):
    """Ones on the k-th diagonal of an N x M (M = N) matrix."""
    dev = resolve_device(device, ctx, "eye")
    return _host(np.eye(int(N), None if M is None else int(M), int(k), dtype=as_dtype(dtype)), dev)


def identity(n, dtype=None, device=None, ctx=None):
    """The ``n`` x ``n`` identity matrix (``eye(n)``; ``zeros``' other
    parameters).
    """
    return eye(n, dtype=dtype, device=device, ctx=ctx)


def _like(a, fill, dtype, where, device=None):
    """``a``'s shape filled with ``fill``; ``a``'s dtype unless ``dtype``."""
    if is_symbol(a):
        if device is not None:
            raise AttrError(f"{where}: device= does not apply to a Symbol (the graph's device "
                            f"is chosen when it is bound)")
        if fill == 0:
            out = apply("zeros_like", [a])
        else:
            out = apply("ones_like", [a])
            if fill != 1:
                out = apply("_mul_scalar", [out], {"scalar": float(fill)})
        return out if dtype is None else apply("Cast", [out], {"dtype": as_dtype(dtype).name})
    if not isinstance(a, NDArray):
        a = np.asarray(a)
        dt = as_dtype(a.dtype if dtype is None else dtype)
        return full(a.shape, fill, dtype=dt, device=device)
    dt = np.dtype(a.dtype) if dtype is None else as_dtype(dtype)
    return full(a.shape, fill, dtype=dt, device=device if device is not None else a.device)


def zeros_like(a, dtype=None, device=None):
    """Zeros of ``a``'s shape, in ``a``'s dtype unless ``dtype`` (a Symbol
    gives a ``zeros_like`` node).

    Parameters
    ----------
    a : NDArray, Symbol or array-like
        Gives the shape (and dtype).
    dtype : dtype, optional
        The result's dtype.
    device : Device, optional
        Where it lives (default: ``a``'s device).
    """
    return _like(a, 0, dtype, "zeros_like", device)


def ones_like(a, dtype=None, device=None):
    """Ones of ``a``'s shape (``zeros_like``'s parameters)."""
    return _like(a, 1, dtype, "ones_like", device)


def full_like(a, fill_value, dtype=None, device=None):
    """``a``'s shape filled with ``fill_value`` (on a Symbol: ``ones_like(a) *
    fill_value``, so inf and nan fill exactly)."""
    return _like(a, fill_value, dtype, "full_like", device)
