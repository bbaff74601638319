"""MXNet's older index ops: batch_take, fill_element_0index, argmax_channel,
ravel_multi_index and unravel_index (rules only; kernels in
``nbdl.kernels.*.index_legacy``).  ``choose_element_0index`` is an alias of
``pick`` (registered in ``indexing``).

As in MXNet 1.9.1, none of them is differentiable (no gradient flows
through them); ``batch_take``, which MXNet registers without any gradient,
refuses a gradient asked through it (a ``GraphError`` when the gradient
graph is built, where MXNet refuses to bind).  Indices may be float
(truncated toward zero) or integer.
"""
from ..errors import GraphError
from .indexing import INDEX_DTYPES
from .registry import Attr, OpDef, register, shape_error
from .rules import known_shape, size_of
from .shape import MOVE_DTYPES

MAX_RAVEL_DIMS = 8   # sizes of ``shape`` the ravel kernels take as scalars

KERNELS = "nbdl.kernels.{}.index_legacy:{}"


def kernels(prepare):
    """The op's kernel paths: ``prepare`` in this family's CPU and CUDA modules."""
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def _first_type(attrs, in_types, out_types):
    """Output has input 0's dtype; the other inputs keep theirs."""
    t = in_types[0] if in_types[0] is not None else out_types[0]
    return [t] + list(in_types[1:]), [t]


# -- batch_take --------------------------------------------------------------------------

def _batch_take_shape(attrs, in_shapes, out_shapes):
    a, idx = in_shapes
    idx = idx if idx is not None else out_shapes[0]
    if a is None or idx is None:
        return in_shapes, [idx]
    if len(a) < 2:
        raise shape_error("batch_take", f"a must have at least 2 dims, got shape {tuple(a)}",
                          in_shapes)
    rows = size_of(a) // a[-1] if a[-1] else size_of(a[:-1])
    if size_of(idx) != rows:
        raise shape_error("batch_take", f"indices of shape {tuple(idx)} must have one entry per "
                                        f"row of a (a shape {tuple(a)}: {rows} rows)", in_shapes)
    return [tuple(a), tuple(idx)], [tuple(idx)]


def _batch_take_grad(node, out_grads):
    raise GraphError(f"batch_take (node {node.name!r}) is not differentiable (MXNet registers "
                     f"no gradient for it): a gradient was asked through it; stop it with "
                     f"BlockGrad/stop_gradient, bind its inputs with grad_req='null', or use pick")


register(OpDef(
    name="batch_take", input_names=("a", "indices"),
    infer_shape=_batch_take_shape, infer_type=_first_type, gradient=_batch_take_grad,
    half_mirrors=True,
    kernels=kernels("prepare_batch_take"), dtypes=MOVE_DTYPES, int_inputs=(1,),
    doc="out[i] = a[i, indices[i]] over a seen as (rows, a.shape[-1]); indices are clipped "
        "to [0, a.shape[-1]) (deprecated in MXNet: use pick)."))


# -- fill_element_0index --------------------------------------------------------------------

def _fill_shape(attrs, in_shapes, out_shapes):
    lhs, mhs, rhs = in_shapes
    lhs = known_shape(lhs, out_shapes[0])
    if lhs is None:
        return in_shapes, out_shapes
    if len(lhs) != 2:
        raise shape_error("fill_element_0index", f"lhs must be 2-d, got shape {tuple(lhs)}",
                          in_shapes)
    want = (lhs[0],)
    for name, s in (("mhs", mhs), ("rhs", rhs)):
        if s is not None and tuple(s) != want:
            raise shape_error("fill_element_0index", f"{name} has shape {tuple(s)}; lhs of shape "
                                                     f"{tuple(lhs)} needs {want}", in_shapes)
    return [tuple(lhs), want, want], [tuple(lhs)]


def _fill_type(attrs, in_types, out_types):
    t = in_types[0] if in_types[0] is not None else out_types[0]
    return [t, in_types[1] if in_types[1] is not None else t, in_types[2]], [t]


register(OpDef(
    name="fill_element_0index", input_names=("lhs", "mhs", "rhs"),
    infer_shape=_fill_shape, infer_type=_fill_type,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_fill_element"), dtypes=MOVE_DTYPES, int_inputs=(2,),
    doc="lhs with out[i, rhs[i]] = mhs[i]; an rhs[i] outside [0, lhs.shape[1]) leaves row i "
        "unchanged."))


# -- argmax_channel ---------------------------------------------------------------------------

def _argmax_channel_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if len(d) < 2:
        raise shape_error("argmax_channel", f"data must have at least 2 dims (axis 1 is the "
                                            f"channel), got shape {tuple(d)}", in_shapes)
    if d[1] == 0:
        raise shape_error("argmax_channel", f"cannot take argmax over an empty axis 1 of shape "
                                            f"{tuple(d)}", in_shapes)
    return in_shapes, [tuple(d[:1]) + tuple(d[2:])]


register(OpDef(
    name="argmax_channel",
    infer_shape=_argmax_channel_shape, infer_type=_first_type,
    gradient=lambda node, out_grads: [None],
    half_mirrors=True,
    kernels=kernels("prepare_argmax_channel"),
    doc="argmax along axis 1 (the channel), as a float of data's dtype; ties give the first."))


# -- ravel_multi_index / unravel_index -----------------------------------------------------------

def ravel_dims(where, shape):
    """The sizes of ``shape`` (the first may be -1: unbounded)."""
    shape = tuple(shape)
    if not shape or len(shape) > MAX_RAVEL_DIMS:
        raise shape_error(where, f"shape={shape} must have between 1 and {MAX_RAVEL_DIMS} dims")
    first, rest = shape[0], shape[1:]
    if first is None or (first < 1 and first != -1) or any(d is None or d < 1 for d in rest):
        raise shape_error(where, f"shape={shape} must hold positive sizes (the first may be -1)")
    return shape


def _ravel_shape(attrs, in_shapes, out_shapes):
    shape = ravel_dims("ravel_multi_index", attrs["shape"])
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if len(d) < 1 or d[0] != len(shape):
        raise shape_error("ravel_multi_index", f"data of shape {tuple(d)} must have "
                                               f"len(shape)={len(shape)} rows", in_shapes)
    return in_shapes, [tuple(d[1:]) or (1,)]


def _unravel_shape(attrs, in_shapes, out_shapes):
    shape = ravel_dims("unravel_index", attrs["shape"])
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    return in_shapes, [(len(shape),) + tuple(d)]


for _name, _rule, _doc in (
        ("_ravel_multi_index", _ravel_shape,
         "Flat indices of the columns of data (one multi-index per column) into an array of "
         "``shape`` (its first size may be -1); not bounds-checked, as MXNet."),
        ("_unravel_index", _unravel_shape,
         "The multi-indices (one per column of the output) of flat indices into an array of "
         "``shape``; the first coordinate is not wrapped (MXNet's rule).")):
    register(OpDef(
        name=_name, attrs={"shape": Attr("tuple")},
        infer_shape=_rule, infer_type=_first_type,
        gradient=lambda node, out_grads: [None],
        half_mirrors=True,
        kernels=kernels("prepare" + _name), dtypes=INDEX_DTYPES, doc=_doc),
        aliases=(_name[1:],))


def ravel_scalars(call):
    """The sizes of a ravel op's ``shape``, padded with 1 to MAX_RAVEL_DIMS
    (the kernels' scalars; the first size, maybe -1, only bounds nothing)."""
    shape = tuple(call.attrs["shape"])
    return tuple(int(d) for d in shape) + (1,) * (MAX_RAVEL_DIMS - len(shape))


def argmax_channel_axis(call):
    """The Call of ``argmax(axis=1)`` an argmax_channel call amounts to."""
    from dataclasses import replace
    return replace(call, attrs={"axis": 1, "keepdims": False})


__all__ = ["MAX_RAVEL_DIMS", "ravel_dims", "ravel_scalars", "argmax_channel_axis"]
