"""Numba's random state and the GPUs' key streams (host code both devices use:
the CPU kernels draw from numba's stream, the CUDA ones take their seeds or
launch keys from here).

``np.random`` inside ``@njit`` code has its own generator, separate from
NumPy's, with one state per thread (so parallel kernels draw from different
streams).  ``seed`` seeds the state of the calling thread, which is the state
the serial kernels (Dropout's mask draw, the samplers' launch keys) use;
``nbdl.random.seed`` calls it.

Each GPU has its own key stream for the samplers (``next_key``): a seed and
a counter, the key of launch ``c`` being ``splitmix64(seed, c)``.
``seed_device(i, s)`` seeds GPU ``i`` alone (``mx.random.seed(s, ctx=gpu(i))``);
``seed_all_devices(s)`` seeds every GPU, each from ``s`` and its id.  A GPU
never seeded starts from a seed drawn from numba's CPU stream, so seeding
that stream alone also fixes it.
"""
import threading

import numpy as np
from .jit import njit

_MASK = (1 << 64) - 1
_lock = threading.Lock()
_streams = {}           # device id -> [seed, launches so far]
_all_seed = [None]      # the seed of seed_all_devices, for GPUs first used after it


@njit(cache=True)
def seed(s):
    """Seed numba's generator for this thread (the serial kernels' stream)."""
    np.random.seed(s)


@njit(cache=True)
def draw_seed():
    """A seed drawn from numba's stream, for generators that live elsewhere
    (the CUDA xoroshiro states): seeding the CPU stream fixes them too."""
    return np.random.randint(0, 2 ** 31 - 1)


def _splitmix(x):
    x = (x + 0x9e3779b97f4a7c15) & _MASK
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & _MASK
    return x ^ (x >> 31)


def seed_device(device_id, s):
    """Seed GPU ``device_id``'s key stream with the integer ``s``.

    Parameters
    ----------
    device_id : int
        The GPU's ordinal.
    s : int
        The seed (any integer; taken modulo 2**64).
    """
    with _lock:
        _streams[int(device_id)] = [_splitmix(int(s) & _MASK), 0]


def seed_all_devices(s):
    """Seed every GPU's key stream from ``s`` (GPU ``i`` from ``s`` and ``i``).

    Parameters
    ----------
    s : int
        The seed (any integer; taken modulo 2**64).
    """
    with _lock:
        _streams.clear()
        _all_seed[0] = int(s) & _MASK


def next_key(device_id):
    """The next launch key (a uint64) of GPU ``device_id``'s stream.

    Parameters
    ----------
    device_id : int
        The GPU's ordinal.
    """
    device_id = int(device_id)
    with _lock:
        st = _streams.get(device_id)
        if st is None:
            base = _all_seed[0]
            if base is None:
                base = int(draw_seed())
            st = _streams[device_id] = [_splitmix(_splitmix(base) ^ device_id), 0]
        c = st[1]
        st[1] = c + 1
        return np.uint64(_splitmix(st[0] ^ _splitmix(c)))
