"""Device arrays' memory: element counts, whether two arrays share bytes,
and the CUDA context a device's kernels run in (plain functions on numpy /
``numba.cuda`` arrays; the runner, the eager path and NDArray use them)."""
import contextlib

import numpy as np


def prod(shape):
    """The number of elements of ``shape``."""
    n = 1
    for d in shape:
        n *= d
    return n


def device_scope(device):
    """The CUDA context of ``device`` (nothing to enter on the CPU)."""
    if device.device_type == "cpu":
        return contextlib.nullcontext()
    from numba import cuda
    return cuda.gpus[device.device_id]


def buffer(a):
    """(address, nbytes) of a device array."""
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0], a.nbytes
    host = getattr(a, "_ary", None)  # numba's CUDA simulator wraps a numpy array
    if isinstance(host, np.ndarray):
        return host.__array_interface__["data"][0], host.nbytes
    return a.__cuda_array_interface__["data"][0], a.size * a.dtype.itemsize


def overlaps(a, b):
    """Whether two device arrays of one device share any byte."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.size > 0 and b.size > 0 and np.may_share_memory(a, b)
    (pa, na), (pb, nb) = buffer(a), buffer(b)
    return na > 0 and nb > 0 and pa < pb + nb and pb < pa + na


def same_buffer(a, b):
    """Whether two device arrays start at the same address with the same size."""
    return buffer(a) == buffer(b)
