"""CUDA kernels of stack, diag, slice_like and broadcast_like: the plans of
``nbdl.kernels.shared.shape_gather_plan`` run by the shape family's CUDA
loops (``nbdl.kernels.cuda.shape``)."""
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared import shape_gather_plan as _plan
from .shape import _gather, _launch, _noop, _scatter, gather_kernel, scatter_kernel, zero_kernel
from .shape import window_put_kernel


def prepare_stack(call):
    plan = _plan.stack(call)
    req = call.req[0]
    n = len(call.in_shapes)
    inner = plan.views[0][1]

    def fn(*args):
        if req == REQ_NULL:
            return
        out = args[n]
        for i in range(n):
            _launch(window_put_kernel, args[i].size, args[i], out, i * inner, req)
    return Launch(fn, plan.scalars, plan.views)


def _gather_like(plan, out_size):
    scalars, views = plan.scalars, plan.views
    if scalars[-1] == REQ_NULL or out_size == 0:
        return Launch(_noop, scalars, views)

    def fn(x, like, out, *walk):
        _launch(gather_kernel, out_size, x, out, *walk)
    return Launch(fn, scalars, views)


def _put(call, plan):
    *walk, req, overlap = plan.scalars
    n_out = size_of(call.out_shapes[0])
    n_g = size_of(call.in_shapes[0])

    def fn(g, out, *scalars):
        if req == REQ_NULL:
            return
        if req != REQ_ADD:
            _launch(zero_kernel, n_out, out)
        if n_g:
            _launch(scatter_kernel, n_g, g, out, *walk, int(req == REQ_ADD), overlap)
    return Launch(fn, plan.scalars, plan.views)


def _run(call, plan):
    if plan.kernel == "gather":
        return _gather(plan, size_of(call.out_shapes[0]))
    if plan.kernel == "gather_like":
        return _gather_like(plan, size_of(call.out_shapes[0]))
    if plan.kernel == "put":
        return _put(call, plan)
    return _scatter(call, plan)


def prepare_diag(call):
    return _run(call, _plan.diag(call))


def prepare_backward_diag(call):
    return _run(call, _plan.backward_diag(call))


def prepare_slice_like(call):
    return _run(call, _plan.slice_like(call))


def prepare_backward_slice_like(call):
    return _run(call, _plan.backward_slice_like(call))


def prepare_broadcast_like(call):
    return _run(call, _plan.broadcast_like(call))
