"""CUDA kernels of _contrib_fft / _contrib_ifft: one thread per row, each
running ``nbdl.kernels.shared.fft``'s Stockham FFT in its own scratch row
(simple and exact, not cuFFT-fast)."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import fft as sf
from ._launch import launcher, noop


def temp_fft(call):
    """Two complex float64 buffers per row."""
    return sf.temp_rows(call, call.op.name == "_contrib_ifft")


@cuda.jit
def _fft_rows(x, out, scratch, n, inverse, add):
    for row in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        if inverse:
            sf.ifft_row(x, out, scratch[row], row, n, add)
        else:
            sf.fft_row(x, out, scratch[row], row, n, add)


def _prepare(call, inverse):
    rows, n = sf.rows_layout(call.in_shapes[0], inverse)
    views = ([(rows, 2 * n), (rows, n)] if inverse else [(rows, n), (rows, 2 * n)]) + [None]
    if rows * n == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    return Launch(launcher(_fft_rows, rows), (n, inverse, call.req[0] == REQ_ADD), views=views)


def prepare_fft(call):
    return _prepare(call, False)


def prepare_ifft(call):
    return _prepare(call, True)
