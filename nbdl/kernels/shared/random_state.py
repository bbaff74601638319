"""Numba's random state (host code both devices use: the CPU kernels draw from it,
the CUDA ones take their seeds from it).

``np.random`` inside ``@njit`` code has its own generator, separate from
NumPy's, with one state per thread (so parallel kernels draw from different
streams).  ``seed`` seeds the state of the calling thread, which is the state
the serial kernels (Dropout's mask draw) use; ``nbdl.random.seed`` calls it.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def seed(s):
    """Seed numba's generator for this thread (the serial kernels' stream)."""
    np.random.seed(s)


@njit(cache=True)
def draw_seed():
    """A seed drawn from numba's stream, for generators that live elsewhere
    (the CUDA xoroshiro states): seeding the CPU stream fixes them too."""
    return np.random.randint(0, 2 ** 31 - 1)
