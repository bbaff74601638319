"""CPU kernels for Cast: a converting copy.

float16 arrays reach these kernels as their uint16 bits (``_half``): a cast
from float16 converts each element to float32 first (exact), a cast to
float16 rounds through float32 to nearest-even, as MXNet's ``half_t``
does (a float64 value is rounded to float32, then to float16)."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._half import bits_launcher, f2h, h2f, is_half
from ..shared.elemwise_plan import size_of
from ..shared.store import py_copy

_copy = njit(cache=True, inline="always")(py_copy)


@njit(cache=True)
def cast_kernel(x, out, req):
    _copy(x, out, req)


@njit(cache=True)
def cast_from_half_kernel(x, out, req):
    """``x`` float16 bits, ``out`` any other dtype."""
    if req == REQ_ADD:
        for i in range(x.size):
            out[i] += h2f(x[i])
    elif req != REQ_NULL:
        for i in range(x.size):
            out[i] = h2f(x[i])


@njit(cache=True)
def cast_to_half_kernel(x, out, req):
    """``x`` any dtype but float16, ``out`` float16 bits."""
    if req == REQ_ADD:
        for i in range(x.size):
            out[i] = f2h(h2f(out[i]) + x[i])
    elif req != REQ_NULL:
        for i in range(x.size):
            out[i] = f2h(x[i])


@njit(cache=True)
def copy_half_kernel(x, out, req):
    """``x`` and ``out`` float16 bits."""
    if req == REQ_ADD:
        for i in range(x.size):
            out[i] = f2h(h2f(out[i]) + h2f(x[i]))
    elif req != REQ_NULL:
        for i in range(x.size):
            out[i] = x[i]


_KERNELS = {(False, False): cast_kernel, (True, False): cast_from_half_kernel,
            (False, True): cast_to_half_kernel, (True, True): copy_half_kernel}


def cast_function(src, dst):
    """The kernel converting ``src`` to ``dst``: ``fn(x, out, req)``.  When
    either dtype is float16 it is a Python wrapper viewing float16 arrays as
    their bits (``_half.bits_launcher``).

    Parameters
    ----------
    src, dst : numpy dtype
        Input and output dtypes.
    """
    key = (is_half(src), is_half(dst))
    fn = _KERNELS[key]
    return bits_launcher(fn) if any(key) else fn


def prepare_cast(call):
    n = size_of(call.out_shapes[0])
    fn = cast_function(call.in_dtypes[0], call.out_dtypes[0])
    return Launch(fn, (int(call.req[0]),), views=[(n,), (n,)])


def prepare_cast_like(call):
    n = size_of(call.out_shapes[0])
    fn = cast_function(call.in_dtypes[0], call.out_dtypes[0])
    # arrays: data, like (shape only), out: the cast's own kernel
    return Launch(fn, (int(call.req[0]),), views=[(n,), (n,), (n,)], args=(0, 2))


def prepare_multicast(call):
    """``amp_multicast``: one converting copy per input/output pair."""
    k = len(call.in_shapes)
    sizes = [size_of(s) for s in call.out_shapes]
    fns = [cast_function(call.in_dtypes[i], call.out_dtypes[i]) for i in range(k)]

    def run(*args):
        for i in range(k):
            fns[i](args[i], args[k + i], args[2 * k + i])
    return Launch(run, tuple(int(r) for r in call.req), views=[(n,) for n in sizes * 2])
