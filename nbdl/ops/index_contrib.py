"""MXNet's contrib index ops: _contrib_arange_like, _contrib_index_array,
_contrib_index_copy and _contrib_boolean_mask (rules only; kernels in
``nbdl.kernels.*.index_contrib``).

``_contrib_boolean_mask``'s output shape depends on the *values* of its
index, which no shape rule can know: nbdl runs it eagerly only
(``nbdl.nd.contrib.boolean_mask`` reads the mask, then takes the selected
rows with ``take``, so autograd records take's gradient: the head gradient
in the selected rows, zeros elsewhere, as MXNet).  The op is in the table so
that ``-symbol.json`` files naming it load and ``nbdl.sym.contrib.boolean_mask``
builds a node, but shape inference of a graph holding it raises a ShapeError
saying so: the executor plans every buffer before it runs, so it cannot bind
such a graph.
"""
import numpy as np

from ..errors import ShapeError
from .ir import backward_node
from .registry import Attr, OpDef, register, shape_error
from .shape import MAX_RANK, MOVE_DTYPES, norm_axis

KERNELS = "nbdl.kernels.{}.index_contrib:{}"


def kernels(prepare):
    """The op's kernel paths: ``prepare`` in this family's CPU and CUDA modules."""
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


# -- _contrib_arange_like -------------------------------------------------------------------

def _arange_like_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if attrs["repeat"] < 1:
        raise shape_error("_contrib_arange_like", f"repeat={attrs['repeat']} must be >= 1",
                          in_shapes)
    if attrs["axis"] is None:
        return in_shapes, [tuple(d)]
    a = norm_axis(attrs["axis"], len(d), "_contrib_arange_like", in_shapes=in_shapes)
    return in_shapes, [(d[a],)]


def _same_dtype(attrs, in_types, out_types):
    t = in_types[0] if in_types[0] is not None else out_types[0]
    return [t], [t]


register(OpDef(
    name="_contrib_arange_like",
    attrs={"start": Attr("float", 0.0), "step": Attr("float", 1.0), "repeat": Attr("int", 1),
           "ctx": Attr("str", ""), "axis": Attr("int", None, optional=True)},
    infer_shape=_arange_like_shape, infer_type=_same_dtype,
    gradient=lambda node, out_grads: [None],
    half_mirrors=True,
    kernels=kernels("prepare_arange_like"), dtypes=MOVE_DTYPES, shape_inputs=(0,),
    doc="start + step * (i // repeat) over data's shape (flat C order), or over axis "
        "``axis`` only; data is read for its shape only."))


# -- _contrib_index_array -------------------------------------------------------------------

def index_array_axes(attrs, dshape, where="_contrib_index_array"):
    axes = attrs["axes"]
    if axes is None:
        axes = tuple(range(len(dshape)))
    out = tuple(norm_axis(a, len(dshape), where, "axes entry", [dshape]) for a in axes)
    if len(out) > MAX_RANK:
        raise shape_error(where, f"axes={tuple(axes)} has more than {MAX_RANK} entries", [dshape])
    return out


def _index_array_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    return in_shapes, [tuple(d) + (len(index_array_axes(attrs, tuple(d))),)]


register(OpDef(
    name="_contrib_index_array",
    attrs={"axes": Attr("tuple", None, optional=True)},
    infer_shape=_index_array_shape,
    infer_type=lambda attrs, in_types, out_types: (in_types, [np.dtype(np.int64)]),
    gradient=lambda node, out_grads: [None],
    half_mirrors=True,
    kernels=kernels("prepare_index_array"), dtypes=(np.dtype(np.int64),), int_inputs=(0,),
    shape_inputs=(0,),
    doc="int64 array of data.shape + (len(axes),): out[i_0, .., i_{n-1}, j] = i_{axes[j]} "
        "(all axes when axes is None); data is read for its shape only."))


# -- _contrib_index_copy ---------------------------------------------------------------------

def _index_copy_shape(attrs, in_shapes, out_shapes):
    old, idx, new = in_shapes
    old = old if old is not None else out_shapes[0]
    where = "_contrib_index_copy"
    if idx is not None and len(idx) != 1:
        raise shape_error(where, f"index_vector must be 1-d, got shape {tuple(idx)}", in_shapes)
    if old is not None and new is not None:
        if len(old) != len(new) or len(old) == 0 or tuple(old[1:]) != tuple(new[1:]):
            raise shape_error(where, f"new_tensor of shape {tuple(new)} must be old_tensor's "
                                     f"{tuple(old)} with another first axis", in_shapes)
        if idx is not None and idx[0] != new[0]:
            raise shape_error(where, f"index_vector has {idx[0]} entries for {new[0]} rows of "
                                     "new_tensor", in_shapes)
        if new[0] > old[0]:
            raise shape_error(where, f"new_tensor has more rows ({new[0]}) than old_tensor "
                                     f"({old[0]})", in_shapes)
    if new is not None and idx is None:
        idx = (new[0],)
    return [old, idx, new], [old]


def _index_copy_type(attrs, in_types, out_types):
    t = next((x for x in (in_types[0], in_types[2], out_types[0]) if x is not None), None)
    return [t, in_types[1], t], [t]


def _index_copy_grad(node, out_grads):
    """MXNet's ``_contrib_backward_index_copy``: old gets the head gradient
    with the copied rows zeroed, new gets those rows, the index nothing."""
    back = backward_node("_contrib_backward_index_copy", [out_grads[0]] + list(node.inputs), node,
                         {})
    return [back.output(0), None, back.output(2)]


def _index_copy_backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    for k in range(3):                       # each gradient has its input's shape
        ins[k + 1] = ins[k + 1] if ins[k + 1] is not None else outs[k]
        outs[k] = ins[k + 1]
    fwd_ins, fwd_outs = _index_copy_shape(attrs, ins[1:], [ins[0]])
    ins[1:] = fwd_ins
    if ins[0] is not None and fwd_outs[0] is not None and tuple(ins[0]) != tuple(fwd_outs[0]):
        raise shape_error("_contrib_backward_index_copy", f"out_grad has shape {tuple(ins[0])} "
                          f"but old_tensor has {tuple(fwd_outs[0])}", in_shapes)
    ins[0] = fwd_outs[0]
    return ins, [ins[1], ins[2], ins[3]]


def _index_copy_backward_type(attrs, in_types, out_types):
    t = next((x for x in (in_types[0], in_types[1], in_types[3], out_types[0], out_types[2])
              if x is not None), None)
    return [t, t, in_types[2], t], [t, in_types[2], t]


register(OpDef(
    name="_contrib_index_copy", input_names=("old_tensor", "index_vector", "new_tensor"),
    infer_shape=_index_copy_shape, infer_type=_index_copy_type,
    gradient=_index_copy_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_index_copy"), dtypes=MOVE_DTYPES, int_inputs=(1,),
    doc="old_tensor with rows index_vector[i] replaced by new_tensor[i]; an index outside "
        "[0, old_tensor.shape[0]) raises IndexOutOfRange."))

register(OpDef(
    name="_contrib_backward_index_copy",
    input_names=("out_grad", "old_tensor", "index_vector", "new_tensor"), num_outputs=3,
    output_names=("old_tensor_grad", "index_vector_grad", "new_tensor_grad"),
    infer_shape=_index_copy_backward_shape, infer_type=_index_copy_backward_type,
    shape_inputs=(1, 3), temp=lambda call: [((call.in_shapes[1][0],), np.dtype(np.int32))],
    half_mirrors=True,
    kernels=kernels("prepare_index_copy_backward"), supports_add=True, dtypes=MOVE_DTYPES,
    int_inputs=(2,),
    doc="Gradients of _contrib_index_copy (MXNet's name): out_grad with the copied rows "
        "zeroed, zeros for the index, the copied rows of out_grad for new_tensor."))


# -- _contrib_boolean_mask (eager only) -----------------------------------------------------------

def _boolean_mask_shape(attrs, in_shapes, out_shapes):
    d, idx = in_shapes
    where = "_contrib_boolean_mask"
    if attrs["axis"] != 0:
        raise shape_error(where, f"axis={attrs['axis']} is not supported (only 0, as MXNet)",
                          in_shapes)
    if d is not None and idx is not None:
        if len(idx) != 1 or len(d) == 0 or idx[0] != d[0]:
            raise shape_error(where, f"index must be 1-d with data.shape[0] entries; data "
                                     f"{tuple(d)}, index {tuple(idx)}", in_shapes)
    if out_shapes[0] is not None or d is None or idx is None:
        return in_shapes, out_shapes
    raise ShapeError(f"{where}: the output shape depends on the values of index, so a graph "
                     "holding this op cannot be planned (bind/simple_bind/hybridize); call "
                     "nbdl.nd.contrib.boolean_mask eagerly instead; input shapes "
                     f"[{d}, {idx}]")


register(OpDef(
    name="_contrib_boolean_mask", input_names=("data", "index"),
    attrs={"axis": Attr("int", 0)},
    infer_shape=_boolean_mask_shape,
    infer_type=lambda attrs, in_types, out_types: ([in_types[0], in_types[1]], [in_types[0]]),
    half_mirrors=True,
    kernels={}, eager_only=True, dtypes=MOVE_DTYPES, int_inputs=(1,),
    doc="The rows of data whose index entry is non-zero.  Eager only "
        "(nbdl.nd.contrib.boolean_mask): the output shape depends on index's values."))


def boolean_mask_rows(index_values, data_shape, where="boolean_mask"):
    """Positions of the non-zero entries of a host copy of the mask."""
    mask = np.asarray(index_values)
    if mask.ndim != 1 or len(data_shape) == 0 or mask.shape[0] != data_shape[0]:
        raise shape_error(where, f"index must be 1-d with data.shape[0] entries; data "
                                 f"{tuple(data_shape)}, index {np.shape(index_values)}")
    return np.nonzero(mask)[0]


__all__ = ["index_array_axes", "boolean_mask_rows"]
