"""_contrib_AdaptiveAvgPooling2D's windows and scalars (plain Python, compiled
by each device's module; the window mean and scatter are Pooling's
``py_pool_window`` / ``py_scatter_window`` with the average code)."""
import numpy as np

from .pooling import AVG  # noqa: F401  (the pool code both devices pass)


def adaptive_plan(in_shape, out_shape, dtype):
    """(planes N*C, H, W, OH, OW, zero of ``dtype``)."""
    n, c, h, w = (int(d) for d in in_shape)
    return n * c, h, w, int(out_shape[2]), int(out_shape[3]), np.dtype(dtype).type(0)


def py_adaptive_bounds(o, size, osize):
    """Input rows ``[floor(o * size / osize), ceil((o + 1) * size / osize))``."""
    a = (o * size) // osize
    b = -((-(o + 1) * size) // osize)
    return a, b
