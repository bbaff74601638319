"""CPU kernels for shape_array, size_array, all_finite, multi_all_finite and
_contrib_allclose (rules in ``nbdl.ops.array_checks``).  Arrays whose values
are read arrive flat; shape_array's input keeps its own shape (its values
are not read)."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_NULL, Launch
from ._half import bits_launcher, h2f
from ..shared.array_checks import py_close
from ..shared.elemwise_plan import size_of as _size

_close = njit(cache=True, inline="always")(py_close)


@njit(cache=True)
def shape_array(x, out, req):
    if req == REQ_NULL:
        return
    for i in range(x.ndim):
        out[i] = x.shape[i]


@njit(cache=True)
def size_array(x, out, req):
    if req != REQ_NULL:
        out[0] = x.size


@njit(cache=True)
def all_finite(x, out, init, req):
    """out[0] = 0 when an element of x, cast to float32, is not finite; set to
    1 first when ``init``."""
    if req == REQ_NULL:
        return
    if init:
        out[0] = np.float32(1)
    for i in range(x.size):
        if not np.isfinite(np.float32(x[i])):
            out[0] = np.float32(0)
            return


@njit(cache=True, error_model="numpy")
def allclose(a, b, out, rtol, atol, equal_nan, half, req):
    """out[0] = 1 when every pair is close (MXNet's test, in the inputs' dtype;
    ``half``: a and b hold float16 bits, compared in float32)."""
    if req == REQ_NULL:
        return
    out[0] = 1
    for i in range(a.size):
        if half:
            x = h2f(a[i])
            y = h2f(b[i])
        else:
            x = a[i]
            y = b[i]
        if not _close(x, y, rtol, atol, equal_nan):
            out[0] = 0
            return


def prepare_shape_array(call):
    return Launch(shape_array, (call.req[0],), views=[None, None])


def prepare_size_array(call):
    return Launch(size_array, (call.req[0],), views=[(_size(call.in_shapes[0]),), (1,)])


def prepare_all_finite(call):
    return Launch(all_finite, (bool(call.attrs["init_output"]), call.req[0]),
                  views=[(_size(call.in_shapes[0]),), (1,)])


def prepare_multi_all_finite(call):
    """One all_finite pass per array (a Python launcher: the inputs are
    variadic), the first one initialising the output when ``init_output``."""
    init, req = bool(call.attrs["init_output"]), call.req[0]
    n = len(call.in_shapes)

    def fn(*arrays):
        out = arrays[n]
        for i in range(n):
            all_finite(arrays[i], out, init and i == 0, req)
    return Launch(fn, (), views=[(_size(s),) for s in call.in_shapes] + [(1,)])


def prepare_allclose(call):
    dt = np.dtype(call.in_dtypes[0])
    half = dt == np.float16
    t = np.float32 if half else (dt.type if dt.kind == "f" else np.float64)
    a = call.attrs
    n = _size(call.in_shapes[0])
    fn = bits_launcher(allclose) if half else allclose
    return Launch(fn, (t(a["rtol"]), t(a["atol"]), bool(a["equal_nan"]), half, call.req[0]),
                  views=[(n,), (n,), (1,)])
