"""CUDA kernels for the shape family: the plans the CPU kernels run too
(``nbdl.kernels.shared.shape_plan`` does the index arithmetic), one thread
per output element."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared import shape_plan as _plan
from ..shared.shape_walk import walk_offset
from ._launch import copy_kernel, grid1d, launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


@cuda.jit
def copy_like_kernel(x, like, out, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        _put(out, i, x[i], req == REQ_ADD)


_offset = cuda.jit(device=True)(walk_offset)


@cuda.jit
def gather_kernel(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                  s0, s1, s2, s3, s4, s5, s6, s7, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, out.size, stride):
        src = _offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7, s0, s1, s2, s3, s4, s5, s6, s7)
        _put(out, k, x[src], req == REQ_ADD)


@cuda.jit
def put_window_kernel(src, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                      s0, s1, s2, s3, s4, s5, s6, s7):
    """The window (base, n_d, s_d) of out = src (flat, C order)."""
    for k in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        out[_offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7,
                    s0, s1, s2, s3, s4, s5, s6, s7)] = src[k]


@cuda.jit
def fill_window_kernel(out, value, total, base, n0, n1, n2, n3, n4, n5, n6, n7,
                       s0, s1, s2, s3, s4, s5, s6, s7):
    for k in range(cuda.grid(1), total, cuda.gridsize(1)):
        out[_offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7,
                    s0, s1, s2, s3, s4, s5, s6, s7)] = value


@cuda.jit
def zero_kernel(out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = 0


@cuda.jit
def scatter_kernel(g, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                   s0, s1, s2, s3, s4, s5, s6, s7, add, overlap):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, g.size, stride):
        dst = _offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7, s0, s1, s2, s3, s4, s5, s6, s7)
        if overlap:
            cuda.atomic.add(out, dst, g[k])
        elif add:
            out[dst] += g[k]
        else:
            out[dst] = g[k]


@cuda.jit
def window_copy_kernel(x, out, off, req):
    """out[r, j] = x[r, off + j]."""
    w = out.shape[1]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, out.size, stride):
        r = k // w
        j = k - r * w
        _put(out, (r, j), x[r, off + j], req == REQ_ADD)


@cuda.jit
def window_put_kernel(src, out, off, req):
    """out[r, off + j] = src[r, j]."""
    w = src.shape[1]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, src.size, stride):
        r = k // w
        j = k - r * w
        _put(out, (r, off + j), src[r, j], req == REQ_ADD)


@cuda.jit
def window_scatter_kernel(g, out, off, req):
    """out[r, j] = g[r, j - off] inside the window, 0 outside (unless adding)."""
    w = out.shape[1]
    gw = g.shape[1]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, out.size, stride):
        r = k // w
        j = k - r * w
        inside = off <= j < off + gw
        if req == REQ_ADD:
            if inside:
                out[r, j] += g[r, j - off]
        elif inside:
            out[r, j] = g[r, j - off]
        else:
            out[r, j] = 0


# -- launchers (Python functions: the CUDA ``fn`` may launch several kernels) ---------------

def _launch(kernel, n, *args):
    blocks, threads = grid1d(n)
    kernel[blocks, threads](*args)


def _noop(*args):
    pass


def _copy(call, plan, kernel):
    if call.req[0] == REQ_NULL:
        return Launch(_noop, plan.scalars, plan.views)
    n = plan.views[0][0]
    return Launch(launcher(kernel, n), plan.scalars, plan.views)


def prepare_copy(call):
    return _copy(call, _plan.copy(call), copy_kernel)


def prepare_copy_like(call):
    return _copy(call, _plan.copy_like(call), copy_like_kernel)


def _gather(plan, out_size):
    """A gather plan (or the 2-D transpose fast path, as a gather) on the GPU."""
    if plan.kernel == "transpose2d":
        b, m, n = plan.views[0]
        scalars = (0,) + (1,) * 5 + (b, n, m) + (0,) * 5 + (m * n, 1, n) + plan.scalars
        views = [(b * m * n,), (b * m * n,)]
    else:
        scalars, views = plan.scalars, plan.views
    if scalars[-1] == REQ_NULL:
        return Launch(_noop, scalars, views)
    return Launch(launcher(gather_kernel, out_size), scalars, views)


def _gather_prepare(name):
    def prepare(call):
        return _gather(getattr(_plan, name)(call), size_of(call.out_shapes[0]))
    prepare.__name__ = f"prepare_{name}"
    return prepare


prepare_transpose = _gather_prepare("transpose")
prepare_flip = _gather_prepare("flip")
prepare_tile = _gather_prepare("tile")
prepare_repeat = _gather_prepare("repeat")
prepare_slice = _gather_prepare("slice")


def _scatter(call, plan):
    *walk, req, overlap = plan.scalars
    n_out = size_of(call.out_shapes[0])
    n_g = size_of(call.in_shapes[0])

    def fn(g, like, out, *scalars):
        if req == REQ_NULL:
            return
        if req != REQ_ADD:
            _launch(zero_kernel, n_out, out)
        _launch(scatter_kernel, n_g, g, out, *walk, int(req == REQ_ADD), overlap)
    return Launch(fn, plan.scalars, plan.views)


def prepare_backward_slice(call):
    return _scatter(call, _plan.backward_slice(call))


def prepare_backward_tile(call):
    return _scatter(call, _plan.backward_tile(call))


def prepare_backward_repeat(call):
    return _scatter(call, _plan.backward_repeat(call))


def prepare_slice_axis(call):
    cl = _plan.slice_axis(call)
    off, req = cl.scalars
    n = size_of(cl.views[1])

    def fn(x, out, *scalars):
        if req != REQ_NULL:
            _launch(window_copy_kernel, n, x, out, off, req)
    return Launch(fn, cl.scalars, cl.views)


def prepare_backward_slice_axis(call):
    cl = _plan.backward_slice_axis(call)
    off, req = cl.scalars
    n = size_of(cl.views[2])

    def fn(g, like, out, *scalars):
        if req != REQ_NULL:
            _launch(window_scatter_kernel, n, g, out, off, req)
    return Launch(fn, cl.scalars, cl.views)


def prepare_concat(call):
    cl = _plan.concat(call)
    req = call.req[0]
    widths = [v[1] for v in cl.views[:-1]]

    def fn(*args):
        if req == REQ_NULL:
            return
        out, off = args[-2], 0
        for a, w in zip(args[:len(widths)], widths):
            _launch(window_put_kernel, a.size, a, out, off, req)
            off += w
    return Launch(fn, cl.scalars, cl.views)


def _split(cl, n_carriers, reqs):
    n = len(reqs)

    def fn(*args):
        x, outs = args[0], args[1 + n_carriers:1 + n_carriers + n]
        off = 0
        for o, r in zip(outs, reqs):
            if r != REQ_NULL:
                _launch(window_copy_kernel, o.size, x, o, off, r)
            off += o.shape[1]
    return Launch(fn, cl.scalars, cl.views)


def prepare_split(call):
    return _split(_plan.split(call), 0, list(call.req))


def prepare_backward_concat(call):
    return _split(_plan.backward_concat(call), len(call.in_shapes) - 1, list(call.req))


def prepare_split_v2(call):
    return _split(_plan.split_v2(call), 0, list(call.req))


def _assign(call, plan, put):
    """copy the input into the output (unless the planner made them one), then
    ``put(out, value_source, walk)`` writes the window."""
    n = size_of(call.in_shapes[0])
    walk = plan.scalars[:17]
    req = plan.scalars[17]

    def fn(x, *rest):
        out = rest[-1]
        if req == REQ_NULL:
            return
        if n:
            _launch(copy_kernel, n, x, out, req)
        put(rest, out, walk)
    return Launch(fn, (), plan.views)


def prepare_slice_assign(call):
    def put(rest, out, walk):
        rhs = rest[0]
        if rhs.size:
            _launch(put_window_kernel, rhs.size, rhs, out, *walk)
    return _assign(call, _plan.slice_assign(call), put)


def prepare_slice_assign_scalar(call):
    plan = _plan.slice_assign_scalar(call)
    value = plan.scalars[18]
    total = size_of(plan.scalars[1:9])

    def put(rest, out, walk):
        if total:
            _launch(fill_window_kernel, total, out, value, total, *walk)
    return _assign(call, plan, put)
