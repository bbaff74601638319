"""CPU kernels of stack, diag, slice_like and broadcast_like: the plans of
``nbdl.kernels.shared.shape_gather_plan`` run by the shape family's loops
(``nbdl.kernels.cpu.shape``).  Two thin loops are added: ``gather_like_kernel``
(a gather whose op has a shape-only second input) and ``put_kernel`` (a
scatter into a zeroed output without one)."""
from ..shared.jit import njit

from ...ops.registry import Launch
from ..shared import shape_gather_plan as _plan
from .shape import concat_kernel, gather_kernel, scatter_kernel


@njit(cache=True)
def gather_like_kernel(x, like, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                       s0, s1, s2, s3, s4, s5, s6, s7, req):
    """``gather_kernel`` with an unread shape-only input between x and out."""
    gather_kernel(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                  s0, s1, s2, s3, s4, s5, s6, s7, req)


@njit(cache=True)
def put_kernel(g, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
               s0, s1, s2, s3, s4, s5, s6, s7, req, overlap):
    """``scatter_kernel`` (zero, then place g) for ops with no shape-only input."""
    scatter_kernel(g, g, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                   s0, s1, s2, s3, s4, s5, s6, s7, req, overlap)


_LOOPS = {"concat": concat_kernel, "gather": gather_kernel, "gather_like": gather_like_kernel,
          "scatter": scatter_kernel, "put": put_kernel}


def _launch(plan):
    return Launch(_LOOPS[plan.kernel], plan.scalars, views=plan.views)


def prepare_stack(call):
    return _launch(_plan.stack(call))


def prepare_diag(call):
    return _launch(_plan.diag(call))


def prepare_backward_diag(call):
    return _launch(_plan.backward_diag(call))


def prepare_slice_like(call):
    return _launch(_plan.slice_like(call))


def prepare_backward_slice_like(call):
    return _launch(_plan.backward_slice_like(call))


def prepare_broadcast_like(call):
    return _launch(_plan.broadcast_like(call))
