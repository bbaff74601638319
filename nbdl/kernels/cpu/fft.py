"""CPU kernels of _contrib_fft / _contrib_ifft: each row through
``nbdl.kernels.shared.fft``'s Stockham FFT in its own scratch row."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import fft as sf


def temp_fft(call):
    """Two complex float64 buffers per row."""
    return sf.temp_rows(call, call.op.name == "_contrib_ifft")


@njit(cache=True)
def fft_rows(x, out, scratch, n, inverse, req):
    if req == REQ_NULL:
        return
    for row in range(x.shape[0]):
        if inverse:
            sf.ifft_row(x, out, scratch[row], row, n, req == REQ_ADD)
        else:
            sf.fft_row(x, out, scratch[row], row, n, req == REQ_ADD)


def _prepare(call, inverse):
    rows, n = sf.rows_layout(call.in_shapes[0], inverse)
    views = [(rows, 2 * n), (rows, n)] if inverse else [(rows, n), (rows, 2 * n)]
    return Launch(fft_rows, (n, inverse, call.req[0]), views=views + [None])


def prepare_fft(call):
    return _prepare(call, False)


def prepare_ifft(call):
    return _prepare(call, True)
