"""Writing into a window: MXNet 1.9.1's ``_slice_assign(lhs, rhs, begin, end,
step)`` (alias ``_crop_assign``, ``_npi_slice_assign``) and
``_slice_assign_scalar(data, scalar, begin, end, step)`` (alias
``_crop_assign_scalar``, ``_npi_slice_assign_scalar``): the output is the
first input with ``out[begin:end:step] = rhs`` (or ``= scalar``), in place
when the planner gives the output the input's buffer (MXNet's front end
calls them with ``out=lhs``).  Rules only; kernels in
``nbdl.kernels.*.shape``.

MXNet registers no gradient for them; nbdl's is the obvious one: the head
gradient with the window zeroed for ``lhs`` / ``data``, the window of the
head gradient for ``rhs``.
"""
from .concat_slice import slice_ranges
from .ir import backward_node, make_node
from .registry import Attr, OpDef, register, shape_error
from .shape import MOVE_DTYPES, kernels, same_type

_SLICE = {"begin": Attr("tuple"), "end": Attr("tuple"), "step": Attr("tuple", ())}


def _window(attrs, dshape, where, in_shapes):
    return tuple(c for _, _, c in slice_ranges(attrs, dshape, where)) if dshape is not None \
        else None


def _assign_shape(attrs, in_shapes, out_shapes):
    where = "_slice_assign"
    ins, outs = list(in_shapes), list(out_shapes)
    lhs = ins[0] if ins[0] is not None else outs[0]
    if lhs is None:
        return ins, outs
    win = _window(attrs, lhs, where, in_shapes)
    if ins[1] is not None and tuple(ins[1]) != win:
        raise shape_error(where, f"rhs has shape {tuple(ins[1])} but the window "
                          f"begin={attrs['begin']}, end={attrs['end']}, step={attrs['step']} of "
                          f"lhs {tuple(lhs)} has shape {win}", in_shapes)
    return [tuple(lhs), win], [tuple(lhs)]


def _assign_scalar_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if d is None:
        return list(in_shapes), list(out_shapes)
    _window(attrs, d, "_slice_assign_scalar", in_shapes)
    return [tuple(d)], [tuple(d)]


def _window_attrs(node):
    return {k: node.attrs[k] for k in _SLICE}


def _cleared(node, g):
    """The head gradient with the window zeroed."""
    return backward_node("_slice_assign_scalar", [g], node,
                         dict(_window_attrs(node), scalar=0.0)).output(0)


def _assign_grad(node, out_grads):
    win = make_node("slice", [out_grads[0]], _window_attrs(node),
                    name=f"{node.name}_backward_rhs").output(0)
    return [_cleared(node, out_grads[0]), win]


def _assign_scalar_grad(node, out_grads):
    return [_cleared(node, out_grads[0])]


register(OpDef(
    name="_slice_assign", input_names=("lhs", "rhs"), attrs=dict(_SLICE),
    infer_shape=_assign_shape, infer_type=same_type, gradient=_assign_grad,
    inplace=lambda attrs: [(0, 0)], kernels=kernels("prepare_slice_assign"),
    dtypes=MOVE_DTYPES, half_mirrors=True,
    doc="lhs with lhs[begin:end:step] = rhs."), aliases=("_crop_assign", "_npi_slice_assign"))

register(OpDef(
    name="_slice_assign_scalar", attrs=dict(_SLICE, scalar=Attr("float", 0.0)),
    infer_shape=_assign_scalar_shape, infer_type=same_type, gradient=_assign_scalar_grad,
    inplace=lambda attrs: [(0, 0)], kernels=kernels("prepare_slice_assign_scalar"),
    dtypes=MOVE_DTYPES, half_mirrors=True,
    doc="data with data[begin:end:step] = scalar (cast to data's dtype)."),
    aliases=("_crop_assign_scalar", "_npi_slice_assign_scalar"))
