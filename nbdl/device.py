"""Devices: ``nbdl.cpu()``, ``nbdl.gpu(i)`` and the ``with device:`` default.

A device knows how to allocate, copy and fill arrays of its kind: numpy arrays
on the CPU, ``numba.cuda`` device arrays on a GPU.  CUDA is imported lazily,
the first time a GPU device is used, so a CPU-only install never touches it.
"""
import threading

import numpy as np

from . import profiler_core as _prof
from .errors import DeviceError

_state = threading.local()


class _DefaultDevice:
    """``Device.default_ctx``: the current default device, read on the class
    (MXNet 1.x's deprecated ``Context.default_ctx``; ``with device:`` and
    ``current_context()`` are the supported ways)."""

    def __get__(self, obj, owner=None):
        import warnings
        warnings.warn("Context.default_ctx has been deprecated; use Context.current_context() "
                      "or with-blocks (with mx.cpu(1): ...)", DeprecationWarning, stacklevel=2)
        return current_device()


class Device:
    """A compute device: ``device_type`` is ``'cpu'`` or ``'gpu'``."""

    __slots__ = ("device_type", "device_id", "_old", "key")
    default_ctx = _DefaultDevice()

    def __init__(self, device_type="cpu", device_id=0):
        if isinstance(device_type, Device):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise DeviceError(f"unknown device type {device_type!r}: expected 'cpu' or 'gpu'")
        if device_type in ("cpu_pinned", "cpu_shared"):
            device_type = "cpu"
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old = None
        self.key = (device_type, self.device_id)   # cheap to hash, for cache keys

    # The kernel table is keyed by 'cpu' / 'cuda'.
    @property
    def kernel_key(self):
        return "cpu" if self.device_type == "cpu" else "cuda"

    def __eq__(self, other):
        return self is other or (isinstance(other, Device) and self.key == other.key)

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        self._old = current_device()
        _state.device = self
        return self

    def __exit__(self, *exc):
        _state.device = self._old
        self._old = None

    # --- storage -----------------------------------------------------------
    def empty(self, shape, dtype):
        """A new uninitialised array on this device (counted by the
        profiler's storage counter when ``profile_memory`` is recording)."""
        if self.device_type == "cpu":
            a = np.empty(shape, dtype=dtype)
        else:
            cuda = _cuda(self)
            with cuda.gpus[self.device_id]:
                a = cuda.device_array(shape, dtype=dtype)
        if _prof.memory:
            _prof.allocated(self, a)
        return a

    def zeros(self, shape, dtype):
        """A new zero-filled array on this device (counted as ``empty``)."""
        if self.device_type == "cpu":
            a = np.zeros(shape, dtype=dtype)
            if _prof.memory:
                _prof.allocated(self, a)
            return a
        a = self.from_numpy(np.zeros(shape, dtype=dtype))
        if _prof.memory:
            _prof.allocated(self, a)
        return a

    def from_numpy(self, a):
        """Copy a numpy array onto this device (a view is kept on the CPU)."""
        a = np.asarray(a)
        if not a.flags.c_contiguous:   # (np.ascontiguousarray would turn 0-d into 1-d)
            a = np.ascontiguousarray(a)
        if self.device_type == "cpu":
            return a
        cuda = _cuda(self)
        with cuda.gpus[self.device_id]:
            return cuda.to_device(a)

    @staticmethod
    def to_numpy(a):
        """``a`` (this device's array: numpy, or a CUDA device array) as a
        numpy array on the host.

        Parameters
        ----------
        a : array
            A device array.
        """
        if isinstance(a, np.ndarray):
            return a
        return a.copy_to_host()


def _cuda(dev):
    try:
        from numba import cuda
    except ImportError as e:  # pragma: no cover - depends on the install
        raise DeviceError(f"{dev}: numba.cuda is not importable ({e}); "
                          "install nbdl[cuda]") from e
    if not cuda.is_available():
        raise DeviceError(f"{dev}: no CUDA device is available "
                          "(set NUMBA_ENABLE_CUDASIM=1 to use the simulator)")
    if dev.device_id >= len(cuda.gpus):
        raise DeviceError(f"{dev}: only {len(cuda.gpus)} GPU(s) present")
    return cuda


def cpu(device_id=0):
    """The CPU device (``nbdl.cpu()``; the id is kept for MXNet's API and
    names nothing else).

    Parameters
    ----------
    device_id : int
        MXNet's CPU id.
    """
    return Device("cpu", device_id)


def gpu(device_id=0):
    """GPU ``device_id`` (a CUDA device through Numba).

    Parameters
    ----------
    device_id : int
        The GPU's index.
    """
    return Device("gpu", device_id)


def num_gpus():
    """The number of CUDA GPUs Numba sees (0 without CUDA)."""
    try:
        from numba import cuda
        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception:
        return 0


def current_device():
    """The device of the innermost ``with device:`` scope on this thread
    (``nbdl.cpu()`` outside any).
    """
    d = getattr(_state, "device", None)
    return d if d is not None else Device("cpu", 0)


def as_device(d):
    """``d`` as a ``Device``: a Device as it is, None as the current
    device, a string such as ``'cpu'`` or ``'gpu(1)'`` parsed.

    Parameters
    ----------
    d : Device, str or None
        What to convert.
    """
    if d is None:
        return current_device()
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        kind, _, idx = d.partition("(")
        return Device(kind.strip(), int(idx.rstrip(")") or 0))
    raise DeviceError(f"expected a Device, got {d!r}")


# MXNet spelling
Context = Device
current_context = current_device
