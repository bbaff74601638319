"""Indexing ops: one_hot, pick, take.  Rules only (kernels in
nbdl.kernels.*.indexing).

Indices may be float or integer arrays (``int_inputs``); float indices are
truncated toward zero, as MXNet casts them.  Gradients go to the data only,
through hidden scatter ops that take the forward data input for its shape
(nbdl has no shape-only dependency), so the data stays live until backward.
"""
import numpy as np

from ..dtype import INTEGERS
from ..errors import AttrError, NbdlError
from .ir import backward_node
from .attrs import Attr
from .partial_shape import accepts_partial, is_full, merge
from .registry import FLOAT_DTYPES, OpDef, kernel_paths, register, shape_error
from .rules import data_axis, data_type, known_shape


class IndexOutOfRange(NbdlError, IndexError):
    """An index outside its axis under ``mode='raise'``."""


_INT_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.int64, np.int8, np.uint8))
INDEX_DTYPES = FLOAT_DTYPES + _INT_DTYPES


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _backward_type(attrs, in_types, out_types):
    """(out_grad, index, data) -> gradient of data."""
    g = next((t for t in (in_types[0], in_types[2], out_types[0]) if t is not None), None)
    if g is None:
        return in_types, out_types
    return [g, in_types[1], g], [g]


# -- one_hot -----------------------------------------------------------------------

def _one_hot_inputs(attrs):
    if attrs["depth"] < 0:
        raise AttrError(f"one_hot: depth={attrs['depth']} is invalid: it must be >= 0")
    return ["indices"]


def _one_hot_shape(attrs, in_shapes, out_shapes):
    depth = attrs["depth"]
    i, o = in_shapes[0], out_shapes[0]
    if i is not None:
        want = tuple(i) + (depth,)
        if o is not None and tuple(o) != want:
            raise shape_error("one_hot", f"output shape {tuple(o)} does not match "
                              f"indices.shape + (depth,) = {want}", in_shapes)
        return [tuple(i)], [want]
    if o is not None:
        if len(o) == 0 or o[-1] != depth:
            raise shape_error("one_hot", f"output shape {tuple(o)} must end in depth={depth}",
                              in_shapes)
        return [tuple(o[:-1])], [tuple(o)]
    return in_shapes, out_shapes


def _one_hot_type(attrs, in_types, out_types):
    return list(in_types), [np.dtype(attrs["dtype"])]


register(OpDef(
    name="one_hot",
    input_names=_one_hot_inputs,
    attrs={"depth": Attr("int", doc="Length of the one-hot dimension."),
           "on_value": Attr("float", 1.0), "off_value": Attr("float", 0.0),
           "dtype": Attr("str", "float32",
                         choices=("float32", "float64", "int32", "int64", "int8", "uint8"))},
    infer_shape=_one_hot_shape, infer_type=_one_hot_type,
    gradient=None,  # piecewise constant in the indices: no gradient
    half_mirrors=True,
    kernels=kernel_paths("indexing", "prepare_one_hot"),
    dtypes=INDEX_DTYPES, int_inputs=(0,),
    doc="indices -> indices.shape + (depth,): on_value at each index, off_value "
        "elsewhere (indices outside [0, depth) give an all-off row)."))


# -- pick --------------------------------------------------------------------------

PICK_ATTRS = {"axis": Attr("int", -1, optional=True), "keepdims": Attr("bool", False),
              "mode": Attr("str", "clip", choices=("clip", "wrap"))}


def _pick_inputs(attrs):
    if attrs["axis"] is None:
        raise AttrError("pick: axis=None (picking from the flattened array) is not supported; "
                        "give an axis")
    return ["data", "index"]


def _pick_out_shape(attrs, d, in_shapes, opname="pick", keepdims=None):
    ax = data_axis(opname, attrs["axis"], d, in_shapes, of="an input")
    keep = attrs["keepdims"] if keepdims is None else keepdims
    out = tuple(d[:ax]) + ((1,) if keep else ()) + tuple(d[ax + 1:])
    if d[ax] == 0 and _size(out) > 0:
        raise shape_error(opname, f"cannot pick along axis {ax} of length 0 "
                          f"(data shape {tuple(d)})", in_shapes)
    return out


def _pick_index_shape(attrs, d, idx, in_shapes, opname="pick"):
    """As MXNet: an index with data's rank has the keepdims form, any other
    the reduced form, whatever ``keepdims`` says about the output."""
    want = _pick_out_shape(attrs, d, in_shapes, opname, keepdims=len(idx) == len(d))
    if tuple(idx) != want:
        raise shape_error(opname, f"index shape {tuple(idx)} does not match data shape "
                          f"{tuple(d)} with axis={attrs['axis']}: expected {want}", in_shapes)
    return want


@accepts_partial
def _pick_shape(attrs, in_shapes, out_shapes):
    d, idx = in_shapes
    o = out_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    d = tuple(d)
    if not all(s is None or is_full(s) for s in (d, idx, o)):
        # partial shapes: data's other dims, known or not, give the output and index
        out = merge(_pick_out_shape(attrs, d, in_shapes), o, "pick", "the output")
        if idx is not None:
            idx = merge(idx, _pick_out_shape(attrs, d, in_shapes, keepdims=len(idx) == len(d)),
                        "pick", "argument 'index'")
        return [d, out if idx is None else idx], [out]
    want = _pick_out_shape(attrs, d, in_shapes)
    if o is not None and tuple(o) != want:
        raise shape_error("pick", f"output shape {tuple(o)} does not match data shape {d} with "
                          f"axis={attrs['axis']}, keepdims={attrs['keepdims']}: expected {want}",
                          in_shapes)
    idx = want if idx is None else _pick_index_shape(attrs, d, idx, in_shapes)
    return [d, idx], [want]


def _pick_grad(node, out_grads):
    g = backward_node("_backward_pick", [out_grads[0], node.inputs[1], node.inputs[0]], node)
    return [g.output(0), None]


def _backward_pick_shape(attrs, in_shapes, out_shapes):
    og, idx, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    want = _pick_out_shape(attrs, d, in_shapes, "_backward_pick")
    idx = want if idx is None else _pick_index_shape(attrs, d, idx, in_shapes, "_backward_pick")
    return [want, idx, d], [d]


register(OpDef(
    name="pick",
    input_names=_pick_inputs,
    attrs=dict(PICK_ATTRS),
    infer_shape=_pick_shape, infer_type=data_type,
    gradient=_pick_grad,
    half_mirrors=True,
    kernels=kernel_paths("indexing", "prepare_pick"),
    int_inputs=(1,),
    doc="out[..., ...] = data[..., index[...], ...] along ``axis``; out-of-range "
        "indices are clipped or wrapped."), aliases=("choose_element_0index",))

register(OpDef(
    name="_backward_pick",
    input_names=("out_grad", "index", "data"),
    attrs=dict(PICK_ATTRS),
    infer_shape=_backward_pick_shape, infer_type=_backward_type,
    half_mirrors=True,
    kernels=kernel_paths("indexing", "prepare_pick_backward"),
    supports_add=True, hidden=True, int_inputs=(1,), shape_inputs=(2,),
    doc="Scatter of pick's head gradient into a zero gradient of data."))


# -- take --------------------------------------------------------------------------

TAKE_ATTRS = {"axis": Attr("int", 0),
              "mode": Attr("str", "clip", choices=("clip", "wrap", "raise"))}


def _take_out_shape(attrs, a, idx, in_shapes, opname="take"):
    if len(a) == 0:
        raise shape_error(opname, "cannot take from a 0-dimensional array", in_shapes)
    ax = data_axis(opname, attrs["axis"], a, in_shapes, of="an input")
    if a[ax] == 0 and _size(idx) > 0:
        raise shape_error(opname, f"cannot take indices {tuple(idx)} from axis {ax} of length 0 "
                          f"(a shape {tuple(a)})", in_shapes)
    return tuple(a[:ax]) + tuple(idx) + tuple(a[ax + 1:])


def _take_shape(attrs, in_shapes, out_shapes):
    a, idx = in_shapes
    o = out_shapes[0]
    if a is not None and idx is not None:
        want = _take_out_shape(attrs, tuple(a), tuple(idx), in_shapes)
        if o is not None and tuple(o) != want:
            raise shape_error("take", f"output shape {tuple(o)} does not match {want}",
                              in_shapes)
        return [tuple(a), tuple(idx)], [want]
    if a is not None and o is not None:
        a, o = tuple(a), tuple(o)
        if len(a) == 0:
            raise shape_error("take", "cannot take from a 0-dimensional array", in_shapes)
        ax = data_axis("take", attrs["axis"], a, in_shapes, of="an input")
        k = len(o) - len(a) + 1
        if k < 0 or o[:ax] != a[:ax] or o[ax + k:] != a[ax + 1:]:
            raise shape_error("take", f"output shape {o} is not compatible with a shape {a} "
                              f"and axis={attrs['axis']}", in_shapes)
        return [a, o[ax:ax + k]], [o]
    return in_shapes, out_shapes


def _take_grad(node, out_grads):
    g = backward_node("_backward_take", [out_grads[0], node.inputs[1], node.inputs[0]], node)
    return [g.output(0), None]


def _backward_take_shape(attrs, in_shapes, out_shapes):
    og, idx, a = in_shapes
    a = known_shape(a, out_shapes[0])
    if a is None:
        return in_shapes, out_shapes
    new_in = [og, idx, tuple(a)]
    if idx is not None:
        new_in[0] = _take_out_shape(attrs, tuple(a), tuple(idx), in_shapes, "_backward_take")
    return new_in, [tuple(a)]


register(OpDef(
    name="take",
    input_names=("a", "indices"),
    attrs=dict(TAKE_ATTRS),
    infer_shape=_take_shape, infer_type=data_type,
    gradient=_take_grad,
    half_mirrors=True,
    kernels=kernel_paths("indexing", "prepare_take"),
    int_inputs=(1,), dtypes=FLOAT_DTYPES + INTEGERS,
    doc="Slices of ``a`` (float or integer) along ``axis`` at ``indices``: output shape "
        "a.shape[:axis] + indices.shape + a.shape[axis+1:]; out-of-range indices are "
        "clipped, wrapped, or (mode='raise') an IndexOutOfRange error."))

register(OpDef(
    name="_backward_take",
    input_names=("out_grad", "indices", "a"),
    attrs=dict(TAKE_ATTRS),
    infer_shape=_backward_take_shape, infer_type=_backward_type,
    half_mirrors=True,
    kernels=kernel_paths("indexing", "prepare_take_backward"),
    supports_add=True, hidden=True, int_inputs=(1,), shape_inputs=(2,),
    dtypes=FLOAT_DTYPES + INTEGERS,
    doc="Scatter-add of take's head gradient into a zero gradient of ``a``."))
