"""Launch configuration shared by the CUDA kernels."""
from numba import cuda

THREADS = 128


def grid1d(n, threads=THREADS):
    """(blocks, threads) covering ``n`` elements with a grid-stride loop."""
    blocks = max(1, min((n + threads - 1) // threads, 65535))
    return blocks, threads


def launcher(kernel, n):
    """A function that launches ``kernel`` over ``n`` elements with the
    executor's ``fn(*arrays, *scalars)`` convention.

    The launch is configured at call time: in Numba's simulator
    ``kernel[grid, block]`` reconfigures the shared kernel object, so a
    configuration made at prepare time could be overwritten by a later
    prepare of the same kernel at another size."""
    blocks, threads = grid1d(n)

    def fn(*args):
        kernel[blocks, threads](*args)
    return fn



def noop(*args):
    """The launch of a step with nothing to do (no work, or no output wanted)."""


@cuda.jit
def _fill_zero(a):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        a[i] = a.dtype.type(0)


def zero(a):
    """Zero the flat (1-d) device array ``a`` (a gradient before atomics add into it)."""
    if a.size:
        launcher(_fill_zero, a.size)(a)
