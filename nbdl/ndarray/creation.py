"""Creating NDArrays: ``array``, ``zeros``, ``ones``, ``full``, ``empty``,
``arange``, ``linspace``, ``eye``, ``*_like`` and ``from_numpy``.

Values are made on the host and copied once to the device (filling is
storage, not arithmetic).  ``ctx=`` and ``device=`` both name the device;
the default is ``nbdl.current_device()``.  The dtype defaults to float32, as
in MXNet 1.x, even for integer numpy sources (``nd.array(np.arange(3))`` is
float32); an NDArray source keeps its dtype.
"""
import numpy as np

from ..device import as_device
from ..dtype import as_dtype
from ..errors import ArgumentError, DeviceError, ShapeError
from ..array import NDArray


def _device(ctx, device):
    if ctx is not None and device is not None and as_device(ctx) != as_device(device):
        raise DeviceError(f"ctx={ctx} and device={device} disagree")
    return as_device(ctx if ctx is not None else device)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _check_stype(stype):
    if stype not in (None, "default"):
        raise ArgumentError(f"storage type {stype!r} is not supported (dense only)")


def from_host(a, device):
    """Wrap a numpy array as an NDArray on ``device`` (copied to a GPU; kept
    as is on the CPU when already contiguous)."""
    return NDArray(device.from_numpy(a), device)


def array(source_array, ctx=None, dtype=None, device=None):
    """An NDArray holding a copy of ``source_array`` (an NDArray, a numpy
    array, nested lists or a scalar)."""
    dev = _device(ctx, device)
    if isinstance(source_array, NDArray):
        src = source_array
        if dtype is not None and as_dtype(dtype) != np.dtype(src.dtype):
            src = src.astype(dtype)
            return src if src.context == dev else src.copyto(dev)
        return src.copyto(dev)
    dt = as_dtype(dtype)
    try:
        a = np.array(source_array, dtype=dt)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"array: source_array must be array-like, got "
                        f"{type(source_array).__name__} ({e})") from None
    return from_host(a, dev)


def share_numpy(a, ctx=None, device=None):
    """nbdl's own wrapping of a host array: shared on the CPU when
    C-contiguous (the source stays writeable), copied otherwise.

    Parameters
    ----------
    a : numpy.ndarray
        The array.
    ctx, device : Device, optional
        Where the NDArray lives (default CPU).
    """
    dev = _device(ctx, device)
    a = np.asarray(a)
    as_dtype(a.dtype)
    if dev.device_type == "cpu" and a.flags.c_contiguous:
        return NDArray(a, dev)
    return NDArray(dev.from_numpy(a.copy() if dev.device_type == "cpu" else a), dev)


def from_numpy(ndarray, zero_copy=True, ctx=None, device=None):
    """An NDArray from a numpy array (the dtype is kept).  With
    ``zero_copy`` (the default, as MXNet 1.x) the NDArray shares the memory
    of the source, which must be C-contiguous (``ValueError`` otherwise) and
    is marked read-only, as MXNet does: write through the NDArray.  On a GPU
    device, or without ``zero_copy``, the data is copied."""
    dev = _device(ctx, device)
    a = np.asarray(ndarray)
    as_dtype(a.dtype)  # rejects dtypes nbdl does not support
    if not zero_copy or dev.device_type != "cpu":
        return NDArray(dev.from_numpy(a.copy() if dev.device_type == "cpu" else a), dev)
    if not a.flags.c_contiguous:
        raise ValueError("from_numpy: only C-contiguous arrays can be shared (zero_copy=True); "
                         "pass zero_copy=False to copy")
    if not a.flags.writeable:
        try:        # a source marked read-only by an earlier from_numpy
            a.flags.writeable = True
        except ValueError:
            raise ValueError("from_numpy: the source is read-only and does not own its "
                             "memory; pass zero_copy=False to copy") from None
    view = a.view()          # keeps its own (writeable) flag for the NDArray
    a.flags.writeable = False
    return NDArray(view, dev)


def empty(shape, ctx=None, dtype=None, device=None, stype=None):
    """An uninitialised array of ``shape``.

    Parameters
    ----------
    shape : int or tuple of int
        The shape.
    ctx, device : Device, optional
        Where it lives (the current device by default).
    dtype : dtype, optional
        float32 by default.
    stype : str, optional
        ``'default'`` only (dense storage).
    """
    _check_stype(stype)
    dev = _device(ctx, device)
    return NDArray(dev.empty(_shape(shape), as_dtype(dtype)), dev)


def zeros(shape, ctx=None, dtype=None, device=None, stype=None, out=None, **kwargs):
    """Zeros of ``shape``; with ``out``, ``out`` filled with zeros and returned."""
    _check_stype(stype)
    _no_kwargs("zeros", kwargs)
    if out is not None:
        return full(shape, 0, out=out)
    dev = _device(ctx, device)
    return NDArray(dev.zeros(_shape(shape), as_dtype(dtype)), dev)


def ones(shape, ctx=None, dtype=None, device=None, out=None, **kwargs):
    """Ones of ``shape``; with ``out``, ``out`` filled with ones and returned."""
    _no_kwargs("ones", kwargs)
    return full(shape, 1, ctx=ctx, dtype=dtype, device=device, out=out)


def full(shape, val, ctx=None, dtype=None, out=None, device=None):
    """``val`` everywhere in ``shape``; with ``out`` (of that shape), ``out``
    filled and returned."""
    if out is not None:
        if tuple(out.shape) != _shape(shape):
            raise ShapeError(f"full: out has shape {tuple(out.shape)}, not {_shape(shape)}")
        out[:] = val
        return out
    dev = _device(ctx, device)
    return from_host(np.full(_shape(shape), val, dtype=as_dtype(dtype)), dev)


def zeros_like(data, dtype=None):
    """Zeros of ``data``'s shape and device, in its dtype unless ``dtype``.

    Parameters
    ----------
    data : NDArray
        Gives the shape, device (and dtype).
    dtype : dtype, optional
        The result's dtype.
    """
    return zeros(data.shape, ctx=data.context, dtype=data.dtype if dtype is None else dtype)


def ones_like(data, dtype=None):
    """Ones of ``data``'s shape and device (``zeros_like``'s parameters)."""
    return ones(data.shape, ctx=data.context, dtype=data.dtype if dtype is None else dtype)


def full_like(data, fill_value, dtype=None):
    """``fill_value`` in ``data``'s shape and device (``zeros_like``'s
    parameters, and the scalar ``fill_value``).
    """
    return full(data.shape, fill_value, ctx=data.context,
                dtype=data.dtype if dtype is None else dtype)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None,
           device=None):
    """``start, start + step, ...`` below ``stop`` (``arange(n)`` is
    ``0 .. n-1``), each value repeated ``repeat`` times; float32 by default.
    As MXNet's ``_arange``: the length is ``ceil((stop - start) / step)``,
    and value ``i`` is ``start + i * step`` computed in ``dtype`` (an integer
    dtype truncates ``start`` and ``step`` first and wraps around).

    Parameters
    ----------
    start : number
        The first value (the stop, from 0, when ``stop`` is None).
    stop : number, optional
        The values stay below it (above it for a negative step).
    step : number
        The spacing (not 0).
    repeat : int
        How many times each value is repeated.
    infer_range : bool, optional
        Accepted for MXNet compatibility (eager calls know their range).
    ctx, device : Device, optional
        Where the array lives (the current device by default).
    dtype : str or numpy dtype, optional
        float32 by default.
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ArgumentError(f"arange: step must not be 0 (start={start}, stop={stop})")
    n = max(0, int(np.ceil((stop - start) / step)))
    dt = np.dtype(as_dtype(dtype))
    if dt.kind in "iub":
        wide = np.int64(np.trunc(start)) + np.arange(n, dtype=np.int64) * np.int64(np.trunc(step))
        values = wide.astype(dt)
    else:
        values = dt.type(start) + np.arange(n).astype(dt) * dt.type(step)
    if repeat != 1:
        values = np.repeat(values, int(repeat))
    return from_host(values, _device(ctx, device))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included with
    ``endpoint``), as numpy's ``linspace``.

    Parameters
    ----------
    start, stop : float
        The interval.
    num : int
        The number of values.
    endpoint : bool
        Whether ``stop`` is the last value.
    ctx, device : Device, optional
        Where it lives.
    dtype : dtype, optional
        float32 by default.
    """
    values = np.linspace(start, stop, int(num), endpoint=endpoint)
    return from_host(values.astype(as_dtype(dtype)), _device(ctx, device))


def eye(N, M=0, k=0, ctx=None, dtype=None, device=None):
    """An ``N`` x ``M`` matrix (``M`` 0: square) with ones on the ``k``-th
    diagonal.

    Parameters
    ----------
    N, M : int
        Rows and columns.
    k : int
        The diagonal (0 the main one, positive above it).
    ctx, device : Device, optional
        Where it lives.
    dtype : dtype, optional
        float32 by default.
    """
    values = np.eye(int(N), int(M) or None, int(k), dtype=as_dtype(dtype))
    return from_host(values, _device(ctx, device))


def waitall():
    """Wait for every queued GPU kernel (CPU work is synchronous)."""
    import sys
    if "numba.cuda" in sys.modules:
        from numba import cuda
        if cuda.is_available():
            for i in range(len(cuda.gpus)):
                with cuda.gpus[i]:
                    cuda.synchronize()


def _no_kwargs(fname, kwargs):
    if kwargs:
        raise ArgumentError(f"{fname}: unexpected keyword arguments {sorted(kwargs)}")
