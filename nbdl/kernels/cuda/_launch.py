"""Launch configuration shared by the CUDA kernels.

The simulator runs the configuration a GPU gets (tests/ops/test_cuda_launch_config.py
says where it cannot afford to): the grids depend on the sizes alone, so a
kernel whose result depended on its configuration would show it there.  The
grids are read from this module's globals at each ``grid1d`` call, so a test
can shrink ``MAX_BLOCKS`` to make tiny arrays take several turns of the
grid-stride loops that only arrays of millions of elements take on a GPU."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL

THREADS = 128
MAX_BLOCKS = 65535       # a grid's x extent; grid-stride loops cover what is past it
RNG_MAX_BLOCKS = 256     # launches with a random state per thread (dropout): states made per bind


WARP = 32


def grid1d(n, threads=None):
    """(blocks, threads) covering ``n`` elements with a grid-stride loop
    (``threads``: ``THREADS`` unless given; fewer, in whole warps, when
    ``n`` is smaller: no block of idle warps, and Numba's simulator, which
    runs each thread as a Python thread, does not start them).

    Parameters
    ----------
    n : int
        The number of elements (grid-stride loop iterations in all).
    threads : int, optional
        Threads per block at most (default ``THREADS``).
    """
    threads = THREADS if threads is None else threads
    threads = max(1, min(threads, -(-n // WARP) * WARP))
    blocks = max(1, min((n + threads - 1) // threads, MAX_BLOCKS))
    return blocks, threads


def rng_grid(n):
    """(blocks, threads) of a launch over ``n`` elements whose threads each
    own a random state (``blocks * threads`` states; grid-stride past them)."""
    blocks, threads = grid1d(n)
    return min(blocks, RNG_MAX_BLOCKS), threads


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


@cuda.jit(device=True, inline=True)
def atomic_add(a, i, v):
    """``cuda.atomic.add(a, i, v)`` as a device function: the scatter-add a
    shared routine that scatters is built with (``kernels.shared.store``)."""
    cuda.atomic.add(a, i, v)


@cuda.jit
def copy_kernel(x, out, req):
    """Flat ``out`` = ``x`` (same size; converted to ``out``'s dtype), added to
    when ``req`` is ``REQ_ADD``, untouched when it is ``REQ_NULL``: one thread
    per element."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        if req == REQ_ADD:
            out[i] += x[i]
        elif req != REQ_NULL:
            out[i] = x[i]


def launcher_without(kernel, n, unread=1):
    """``launcher(kernel, n)`` for a step whose argument ``unread`` (an index
    into the executor's ``fn(*arrays, *scalars)``; the second by default:
    a ``like`` input or a forward input its gradient kernel does not read)
    the kernel does not take."""
    run = launcher(kernel, n)

    def fn(*args):
        run(*args[:unread], *args[unread + 1:])
    return fn
