"""Kernels: ``cpu`` (Numba @njit) and ``cuda`` (numba.cuda.jit), one module per op family."""
