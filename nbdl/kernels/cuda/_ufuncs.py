"""numpy's rounding ufuncs in CUDA kernels.

The elementwise expressions shared with the CPU (``kernels/shared/elemwise_exprs.py``)
round with ``np.floor``, ``np.ceil``, ``np.trunc`` and ``np.cbrt``, which keep
the float type and NaN (``math.floor`` returns an integer).  numba-cuda (0.30)
types those calls in a kernel but its CUDA ufunc table has no loops for
them, so the kernel failed to compile on a GPU ("KeyError: <ufunc 'floor'>")
while the simulator, which runs kernels as Python, passed it; found by
tools/cuda_compile_check.py.  ``register()`` copies the float loops from
numba-cuda's own numpy ufunc table (the same per-element implementations
its ``@vectorize`` uses), only where the CUDA table lacks them, so a
numba-cuda that has them is left alone.
"""
import numpy as np
from numba import config as numba_config

# np.power: numba-cuda's cbrt loop is written with it
UFUNCS = (np.floor, np.ceil, np.trunc, np.cbrt, np.power)


def register():
    """Add the missing float loops of ``UFUNCS`` to numba-cuda's CUDA ufunc
    table (nothing under the simulator, which needs none)."""
    if numba_config.ENABLE_CUDASIM:
        return
    from numba.cuda import ufuncs
    from numba.cuda.np import ufunc_db as numpy_loops
    table = ufuncs.ufunc_db()
    for uf in UFUNCS:
        if uf not in table:
            loops = numpy_loops.get_ufunc_info(uf)
            table[uf] = {k: v for k, v in loops.items() if set(k) <= set("fd->")}


register()
