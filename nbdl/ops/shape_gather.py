"""stack, diag, slice_like and broadcast_like: shape ops whose kernels are
the shape family's loops (rules only; which loop, with which walk, is
``nbdl.kernels.shared.shape_gather_plan``).

``stack`` is ``Concat`` of the inputs seen as ``(outer, inner)`` rows;
``diag`` of a 2-D+ input, ``slice_like`` and ``broadcast_like`` are strided
gathers (a diagonal walks ``stride(axis1) + stride(axis2)``, a broadcast axis
walks stride 0) and their gradients the matching scatters; ``diag`` of a 1-D
input is a scatter into a zero matrix, whose gradient is ``diag`` again.
"""
from .ir import backward_node
from .registry import Attr, OpDef, register, shape_error
from .rules import known_shape
from .shape import MOVE_DTYPES, forward_of_backward, grad_type, norm_axis, same_type

KERNELS = "nbdl.kernels.{}.shape_gather:{}"


def kernels(prepare):
    """The op's kernel paths: ``prepare`` in this family's CPU and CUDA modules."""
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def _like_type(attrs, in_types, out_types):
    """(data, like) -> data's dtype; ``like`` is read for its shape only."""
    t = in_types[0] if in_types[0] is not None else out_types[0]
    return [t, in_types[1]], [t]


# -- stack ------------------------------------------------------------------------------

def _stack_inputs(attrs):
    n = attrs["num_args"]
    if n < 1:
        raise shape_error("stack", f"num_args={n} must be at least 1")
    return [f"arg{i}" for i in range(n)]


def stack_axis(attrs, ndim, in_shapes=None):
    """stack's axis in the (ndim + 1)-d output."""
    return norm_axis(attrs["axis"], ndim + 1, "stack", in_shapes=in_shapes)


def _stack_shape(attrs, in_shapes, out_shapes):
    known = next((s for s in in_shapes if s is not None), None)
    o = out_shapes[0]
    if known is None and o is not None:
        a = norm_axis(attrs["axis"], len(o), "stack", in_shapes=in_shapes)
        known = tuple(o[:a]) + tuple(o[a + 1:])
    if known is None:
        return in_shapes, out_shapes
    for i, s in enumerate(in_shapes):
        if s is not None and tuple(s) != tuple(known):
            raise shape_error("stack", f"arg{i} has shape {tuple(s)}, but every input must have "
                                       f"shape {tuple(known)}", in_shapes)
    a = stack_axis(attrs, len(known), in_shapes)
    out = tuple(known[:a]) + (len(in_shapes),) + tuple(known[a:])
    if o is not None and tuple(o) != out:
        raise shape_error("stack", f"output shape {tuple(o)} does not match {out}", in_shapes)
    return [tuple(known)] * len(in_shapes), [out]


def _stack_grad(node, out_grads):
    n = node.attrs["num_args"]
    g = backward_node("SliceChannel", [out_grads[0]], node,
                      {"num_outputs": n, "axis": node.attrs["axis"], "squeeze_axis": True})
    return [g.output(i) for i in range(n)]


register(OpDef(
    name="stack",
    input_names=_stack_inputs, key_var_num_args="num_args",
    attrs={"axis": Attr("int", 0), "num_args": Attr("int")},
    infer_shape=_stack_shape, infer_type=same_type,
    gradient=_stack_grad,
    half_mirrors=True,
    kernels=kernels("prepare_stack"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Join ``num_args`` arrays of one shape along a new axis ``axis`` (in "
        "[-(ndim+1), ndim])."))


# -- diag -------------------------------------------------------------------------------

DIAG_ATTRS = {"k": Attr("int", 0), "axis1": Attr("int", 0), "axis2": Attr("int", 1)}


def diag_axes(attrs, dshape, where="diag"):
    """(axis1, axis2, length) of the k-th diagonal of a 2-D+ ``dshape``."""
    nd = len(dshape)
    a1 = norm_axis(attrs["axis1"], nd, where, "axis1", [dshape])
    a2 = norm_axis(attrs["axis2"], nd, where, "axis2", [dshape])
    if a1 == a2:
        raise shape_error(where, f"axis1={attrs['axis1']} and axis2={attrs['axis2']} name the "
                                 "same axis", [dshape])
    k = attrs["k"]
    n1, n2 = dshape[a1], dshape[a2]
    length = min(n1, n2 - k) if k >= 0 else min(n1 + k, n2)
    if length <= 0:
        raise shape_error(where, f"the diagonal k={k} does not exist in axes ({a1}, {a2}) of "
                                 f"sizes ({n1}, {n2})", [dshape])
    return a1, a2, length


def diag_out_shape(attrs, dshape, where="diag"):
    if len(dshape) == 0:
        raise shape_error(where, "diag needs a 1-d or larger input, got a 0-d one", [dshape])
    if len(dshape) == 1:
        n = dshape[0] + abs(attrs["k"])
        return (n, n)
    a1, a2, length = diag_axes(attrs, dshape, where)
    return tuple(d for i, d in enumerate(dshape) if i not in (a1, a2)) + (length,)


def _diag_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    out = diag_out_shape(attrs, tuple(d))
    if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
        raise shape_error("diag", f"output shape {tuple(out_shapes[0])} does not match {out}",
                          in_shapes)
    return in_shapes, [out]


def _diag_grad(node, out_grads):
    """1-D input: the gradient is the k-th diagonal of the head gradient;
    2-D+: the head gradient scattered back onto the diagonal."""
    g = backward_node("_backward_diag", [out_grads[0], node.inputs[0]], node)
    return [g.output(0)]


def _backward_diag_shape(attrs, in_shapes, out_shapes):
    og, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    want = diag_out_shape(attrs, tuple(d), "_backward_diag")
    if og is not None and tuple(og) != want:
        raise shape_error("_backward_diag", f"out_grad shape {tuple(og)} does not match {want}",
                          in_shapes)
    return [want, tuple(d)], [tuple(d)]


register(OpDef(
    name="diag", attrs=dict(DIAG_ATTRS),
    infer_shape=_diag_shape, infer_type=same_type,
    gradient=_diag_grad,
    half_mirrors=True,
    kernels=kernels("prepare_diag"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="1-d input: a square matrix with the input on its k-th diagonal; 2-d or more: "
        "the k-th diagonal of axes (axis1, axis2), moved to the last axis (numpy.diagonal)."))

register(OpDef(
    name="_backward_diag", input_names=("out_grad", "data"), hidden=True,
    attrs=dict(DIAG_ATTRS),
    infer_shape=_backward_diag_shape, infer_type=grad_type,
    gradient=forward_of_backward("diag", tuple(DIAG_ATTRS)),
    half_mirrors=True,
    kernels=kernels("prepare_backward_diag"), supports_add=True, shape_inputs=(1,),
    doc="diag's gradient; data is read for its shape only."))


# -- slice_like -------------------------------------------------------------------------

def slice_like_shape(attrs, dshape, lshape, where="slice_like"):
    """Output shape: ``dshape`` cut to ``lshape`` on ``axes`` (all axes when empty)."""
    axes = attrs["axes"]
    shapes = [dshape, lshape]
    if not axes:
        if len(dshape) != len(lshape):
            raise shape_error(where, f"data ({len(dshape)}-d) and shape_like ({len(lshape)}-d) "
                                     "must have the same rank when axes is empty", shapes)
        axes = range(len(dshape))
    out = list(dshape)
    for ax in axes:
        a = norm_axis(ax, len(dshape), where, "axes entry", shapes)
        if a >= len(lshape):
            raise shape_error(where, f"axes entry {ax} is out of range for shape_like of "
                                     f"{len(lshape)} dims", shapes)
        if lshape[a] > dshape[a]:
            raise shape_error(where, f"axis {a} of shape_like has size {lshape[a]}, more than "
                                     f"data's {dshape[a]}", shapes)
        out[a] = lshape[a]
    return tuple(out)


def _once_both_known(shape_of):
    """The shape rule of an op of two inputs whose output shape is
    ``shape_of(attrs, shape0, shape1)``, run once both are known."""
    def infer_shape(attrs, in_shapes, out_shapes):
        a, b = in_shapes
        if a is None or b is None:
            return in_shapes, out_shapes
        return in_shapes, [shape_of(attrs, tuple(a), tuple(b))]
    return infer_shape


def _slice_like_grad(node, out_grads):
    g = backward_node("_backward_slice_like", [out_grads[0], node.inputs[0]], node,
                      {"axes": node.attrs["axes"]})
    return [g.output(0), None]


def _backward_slice_like_shape(attrs, in_shapes, out_shapes):
    og, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if og is not None:
        if len(og) != len(d) or any(g > n for g, n in zip(og, d)):
            raise shape_error("_backward_slice_like", f"out_grad shape {tuple(og)} is not a "
                                                      f"corner of data shape {tuple(d)}", in_shapes)
    return [og, tuple(d)], [tuple(d)]


def _slice_like_grad_of_grad(node, out_grads):
    g = backward_node("slice_like", [out_grads[0], node.inputs[0]], node,
                      {"axes": node.attrs["axes"]})
    return [g.output(0), None]


register(OpDef(
    name="slice_like", input_names=("data", "shape_like"), shape_inputs=(1,), int_inputs=(1,),
    attrs={"axes": Attr("tuple", ())},
    infer_shape=_once_both_known(slice_like_shape), infer_type=_like_type,
    gradient=_slice_like_grad,
    half_mirrors=True,
    kernels=kernels("prepare_slice_like"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="data[:like.shape[0], :like.shape[1], ...] on ``axes`` (all axes when empty); "
        "shape_like is read for its shape only."))

register(OpDef(
    name="_backward_slice_like", input_names=("out_grad", "data"), hidden=True,
    attrs={"axes": Attr("tuple", ())},
    infer_shape=_backward_slice_like_shape, infer_type=grad_type,
    gradient=_slice_like_grad_of_grad,
    half_mirrors=True,
    kernels=kernels("prepare_backward_slice_like"), supports_add=True, shape_inputs=(1,),
    doc="slice_like's gradient: out_grad in the leading corner, zeros elsewhere."))


# -- broadcast_like -----------------------------------------------------------------------

def broadcast_like_shape(attrs, lshape, rshape, where="broadcast_like"):
    la, ra = attrs["lhs_axes"], attrs["rhs_axes"]
    shapes = [lshape, rshape]
    if (la is None) != (ra is None):
        raise shape_error(where, f"lhs_axes={la} and rhs_axes={ra} must be given together",
                          shapes)
    if la is None:
        if len(lshape) != len(rshape):
            raise shape_error(where, f"lhs ({len(lshape)}-d) and rhs ({len(rshape)}-d) must have "
                                     "the same rank when no axes are given", shapes)
        pairs = [(i, i) for i in range(len(lshape))]
    else:
        if len(la) != len(ra):
            raise shape_error(where, f"lhs_axes={la} and rhs_axes={ra} have different lengths",
                              shapes)
        if not la:
            raise shape_error(where, "lhs_axes and rhs_axes must not be empty (as MXNet)", shapes)
        pairs = [(norm_axis(a, len(lshape), where, "lhs_axes entry", shapes),
                  norm_axis(b, len(rshape), where, "rhs_axes entry", shapes)) for a, b in zip(la, ra)]
    out = list(lshape)
    for a, b in pairs:
        if lshape[a] != rshape[b] and lshape[a] != 1:
            raise shape_error(where, f"axis {a} of lhs has size {lshape[a]}, which cannot be "
                                     f"broadcast to {rshape[b]} (only size-1 axes can)", shapes)
        out[a] = rshape[b]
    return tuple(out)


def _broadcast_like_grad(node, out_grads):
    g = backward_node("_broadcast_backward", [out_grads[0], node.inputs[0]], node, {})
    return [g.output(0), None]


register(OpDef(
    name="broadcast_like", input_names=("lhs", "rhs"), shape_inputs=(1,), int_inputs=(1,),
    attrs={"lhs_axes": Attr("tuple", None, optional=True),
           "rhs_axes": Attr("tuple", None, optional=True)},
    infer_shape=_once_both_known(broadcast_like_shape), infer_type=_like_type,
    gradient=_broadcast_like_grad,
    half_mirrors=True,
    kernels=kernels("prepare_broadcast_like"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Broadcast lhs's size-1 axes to rhs's shape (or lhs_axes to rhs's rhs_axes); "
        "rhs is read for its shape only."))

__all__ = ["diag_axes", "diag_out_shape", "slice_like_shape", "broadcast_like_shape",
           "stack_axis"]
