"""float16 for the CPU's generated elementwise loops.

Numba's CPU target cannot type float16 arrays, so a float16 array reaches
a kernel as its uint16 bits (``bits_launcher`` views it so) and the kernel
converts each element: ``h2f`` to float32, the expression in float32 (as
MXNet's half_t arithmetic does), ``f2h`` back with round-to-nearest-even,
overflow to inf and NaN kept."""
import math

import numpy as np
from ..shared.jit import njit

_HALF = np.dtype(np.float16)


@njit(cache=True)
def h2f(h):
    """float32 value of the float16 whose bits are ``h`` (a uint16)."""
    b = np.uint32(h)
    e = (b >> np.uint32(10)) & np.uint32(0x1f)
    m = b & np.uint32(0x3ff)
    if e == 0:
        v = np.float32(m) * np.float32(5.960464477539063e-08)        # m * 2**-24
    elif e == 31:
        v = np.float32(np.inf) if m == 0 else np.float32(np.nan)
    else:
        v = np.float32(math.ldexp(float(m + np.uint32(1024)), int(e) - 25))
    return -v if (b >> np.uint32(15)) & np.uint32(1) else v


@njit(cache=True)
def f2h(value):
    """The bits (uint16) of ``value`` rounded to float32, then to float16."""
    f = np.float32(value)
    if f != f:
        return np.uint16(0x7e00)
    s = 0x8000 if (f < 0 or (f == 0 and math.copysign(1.0, f) < 0)) else 0
    a = abs(float(f))
    if a == np.inf:
        return np.uint16(s | 0x7c00)
    if a < 6.103515625e-05:                        # below 2**-14: subnormal (or 0)
        return np.uint16(s | int(np.rint(a * 16777216.0)))
    m, e = math.frexp(a)                           # a = m * 2**e, m in [0.5, 1)
    bits = ((e + 13) << 10) + int(np.rint(m * 2048.0))   # a carry into the exponent is right
    if bits >= 0x7c00:
        bits = 0x7c00
    return np.uint16(s | bits)


def is_half(dtype):
    return dtype is not None and np.dtype(dtype) == _HALF


def bits_launcher(kernel):
    """``fn(*args)`` calling ``kernel`` with every float16 array viewed as its
    uint16 bits (a Python function: a schedule with it runs its Python loop,
    not a generated driver)."""
    def run(*args):
        return kernel(*[a.view(np.uint16) if isinstance(a, np.ndarray) and a.dtype == _HALF
                        else a for a in args])
    run.kernel = kernel
    return run


def host_copy(dst, src):
    """Converting copy (float16 <-> float32) of two same-size host arrays:
    the ``copy`` of ``kernels.shared.half_mirror`` and of ``OpDef.half_mirrors``
    ops on the CPU."""
    np.copyto(dst.reshape(-1), src.reshape(-1), casting="unsafe")
