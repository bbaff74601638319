"""Shape-manipulation ops that move data without arithmetic: Flatten,
expand_dims, squeeze, reshape_like, transpose, flip, tile, repeat (rules
only; kernels in nbdl.kernels.*.shape).  Concat, SliceChannel, slice
and slice_axis are in ``concat_slice``; Reshape and _npx_reshape in ``reshape``.

Reshape-like ops keep the element order, so their kernel is a flat copy that
may run in place.  transpose, flip, tile and repeat are strided gathers:
``strided_plan`` turns them into at most ``MAX_RANK`` (count, stride) pairs
that one kernel per device walks."""
import numpy as np

from ..dtype import ALL as _ALL_DTYPES
from .ir import backward_node
from .elemwise_unary import same_shape
from .partial_shape import accepts_partial, merge
from .registry import Attr, OpDef, register, shape_error
from .rules import same_type, size_of

# Data movement works for every dtype nbdl stores except float16 and bool
# (no arithmetic happens, but Numba's CPU float16 support is partial).
MOVE_DTYPES = tuple(d for d in _ALL_DTYPES if d not in (np.dtype(np.float16), np.dtype(np.bool_)))
MAX_RANK = 8  # dims a strided gather walks after merging (MXNet's transpose allows 6)

KERNELS = "nbdl.kernels.{}.shape:{}"


def kernels(prepare):
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def c_strides(shape):
    """Element strides of a C-contiguous array."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def norm_axis(axis, ndim, where, what="axis", in_shapes=None):
    if not -ndim <= axis < ndim:
        raise shape_error(where, f"{what}={axis} is out of range for {ndim}-d input", in_shapes)
    return axis + ndim if axis < 0 else axis


def strided_plan(out_shape, strides, base=0):
    """``out`` (C order) element ``(i_0, .., i_k)`` reads ``src[base + sum i_d *
    strides[d]]``.  Drops size-1 dims and merges neighbours that walk memory
    as one dim, then pads to ``MAX_RANK`` with leading ``(1, 0)``.  Returns
    ``(counts, strides)``, or None when the walk needs more than MAX_RANK dims."""
    if size_of(out_shape) == 0:
        return (0,) + (1,) * (MAX_RANK - 1), (0,) * MAX_RANK
    dims = []
    for n, s in zip(out_shape, strides):
        if n == 1:
            continue
        if dims and dims[-1][1] == n * s:
            dims[-1] = (dims[-1][0] * n, s)
        else:
            dims.append((n, s))
    if len(dims) > MAX_RANK:
        return None
    dims = [(1, 0)] * (MAX_RANK - len(dims)) + dims
    return tuple(n for n, _ in dims), tuple(s for _, s in dims)


def reshape_like_grad(node, out_grads):
    """Gradient of an op that only relabels the shape: reshape the head
    gradient back to the input's shape."""
    return [backward_node("reshape_like", [out_grads[0], node.inputs[0]], node, {}).output(0)]


# -- Flatten -------------------------------------------------------------------

def _flatten_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if len(d) == 0:
        raise shape_error("Flatten", "cannot flatten a 0-d input", in_shapes)
    return in_shapes, [(d[0], size_of(d[1:]))]


register(OpDef(
    name="Flatten",
    infer_shape=_flatten_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="(d0, d1, ..., dk) -> (d0, d1*...*dk)."), aliases=("flatten",))


# -- expand_dims / squeeze ------------------------------------------------------------

def _expand_dims_shape(attrs, in_shapes, out_shapes):
    axis = attrs["axis"]
    d, o = in_shapes[0], out_shapes[0]
    if d is not None:
        a = norm_axis(axis, len(d) + 1, "expand_dims", in_shapes=in_shapes)
        return in_shapes, [tuple(d[:a]) + (1,) + tuple(d[a:])]
    if o is not None:
        a = norm_axis(axis, len(o), "expand_dims", in_shapes=in_shapes)
        if o[a] != 1:
            raise shape_error("expand_dims", f"output shape {o} has {o[a]} at axis {axis}, not 1")
        return [tuple(o[:a]) + tuple(o[a + 1:])], out_shapes
    return in_shapes, out_shapes


register(OpDef(
    name="expand_dims",
    attrs={"axis": Attr("int")},
    infer_shape=_expand_dims_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Insert a size-1 dim at ``axis`` (negative counts from the end of the output)."))


def squeeze_axes(attrs, dshape, where="squeeze"):
    """The normalised axes squeeze removes (all size-1 dims when axis is None)."""
    axis = attrs["axis"]
    if axis is None:
        return tuple(i for i, n in enumerate(dshape) if n == 1)
    axes = tuple(norm_axis(a, len(dshape), where, in_shapes=[dshape]) for a in axis)
    if len(set(axes)) != len(axes):
        raise shape_error(where, f"axis={axis} repeats an axis", [dshape])
    for a in axes:
        if dshape[a] != 1:
            raise shape_error(where, f"cannot squeeze axis {a} of size {dshape[a]} (only size-1 dims)",
                              [dshape])
    return axes


def _squeeze_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    axes = squeeze_axes(attrs, d)
    out = tuple(n for i, n in enumerate(d) if i not in axes)
    return in_shapes, [out or (1,)]  # MXNet 1.x keeps one dim when everything goes


register(OpDef(
    name="squeeze",
    attrs={"axis": Attr("tuple", None, optional=True)},
    infer_shape=_squeeze_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Remove size-1 dims (all of them, or those in ``axis``)."))


# -- reshape_like --------------------------------------------------------------------

def _range(begin, end, ndim, where, what):
    b = 0 if begin is None else begin
    e = ndim if end is None else end
    b = b + ndim if b < 0 else b
    e = e + ndim if e < 0 else e
    if not 0 <= b <= e <= ndim:
        raise shape_error(where, f"{what} range [{begin}, {end}) is invalid for {ndim}-d input")
    return b, e


def _reshape_like_shape(attrs, in_shapes, out_shapes):
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, out_shapes
    lb, le = _range(attrs["lhs_begin"], attrs["lhs_end"], len(lhs), "reshape_like", "lhs")
    rb, re = _range(attrs["rhs_begin"], attrs["rhs_end"], len(rhs), "reshape_like", "rhs")
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re]) + tuple(lhs[le:])
    if size_of(out) != size_of(lhs):
        raise shape_error("reshape_like", f"lhs of shape {tuple(lhs)} cannot take shape {out} "
                                          f"({size_of(lhs)} vs {size_of(out)} elements)", in_shapes)
    return in_shapes, [out]


def _reshape_like_type(attrs, in_types, out_types):
    t = in_types[0] if in_types[0] is not None else out_types[0]
    return [t, in_types[1]], [t]


def _reshape_like_grad(node, out_grads):
    return [backward_node("reshape_like", [out_grads[0], node.inputs[0]], node, {}).output(0), None]


register(OpDef(
    name="reshape_like",
    input_names=("lhs", "rhs"), shape_inputs=(1,),
    attrs={k: Attr("int", None, optional=True)
           for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
    infer_shape=_reshape_like_shape, infer_type=_reshape_like_type,
    gradient=_reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy_like"), supports_add=True, dtypes=MOVE_DTYPES,
    int_inputs=(1,),
    doc="lhs with (a range of) rhs's shape; rhs is read for its shape only."))


# -- transpose -----------------------------------------------------------------------

def transpose_axes(axes, ndim, where="transpose", in_shapes=None):
    if not axes:
        return tuple(range(ndim - 1, -1, -1))
    if len(axes) != ndim:
        raise shape_error(where, f"axes={tuple(axes)} has {len(axes)} entries for a {ndim}-d input",
                          in_shapes)
    norm = tuple(norm_axis(a, ndim, where, "axes entry", in_shapes) for a in axes)
    if sorted(norm) != list(range(ndim)):
        raise shape_error(where, f"axes={tuple(axes)} is not a permutation of 0..{ndim - 1}", in_shapes)
    return norm


@accepts_partial
def _transpose_shape(attrs, in_shapes, out_shapes):
    # both ways, dim by dim: a partial input and a partial output fill each other
    d, o = in_shapes[0], out_shapes[0]
    if d is None and o is None:
        return in_shapes, out_shapes
    axes = transpose_axes(attrs["axes"], len(d if d is not None else o), in_shapes=in_shapes)
    fwd = None if d is None else tuple(d[a] for a in axes)
    out = merge(fwd, o, "transpose", "the output")
    src = [0] * len(out)
    for i, a in enumerate(axes):
        src[a] = out[i]
    return [tuple(src)], [out]


def _transpose_grad(node, out_grads):
    axes = node.attrs["axes"]
    attrs = {}
    if axes:
        inv = [0] * len(axes)
        for i, a in enumerate(axes):
            inv[a % len(axes)] = i
        attrs["axes"] = tuple(inv)
    return [backward_node("transpose", [out_grads[0]], node, attrs).output(0)]


register(OpDef(
    name="transpose",
    attrs={"axes": Attr("tuple", ())},
    infer_shape=_transpose_shape, infer_type=same_type,
    gradient=_transpose_grad,
    half_mirrors=True,
    kernels=kernels("prepare_transpose"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Permute the dims (reverse them when axes is empty); copies the data."))


# -- flip ------------------------------------------------------------------------------

def flip_axes(attrs, ndim, where="reverse"):
    axes = tuple(norm_axis(a, ndim, where) for a in attrs["axis"])
    return frozenset(axes)


def _flip_shape(attrs, in_shapes, out_shapes):
    known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if known is not None:
        flip_axes(attrs, len(known))
    return same_shape(attrs, in_shapes, out_shapes)


def _flip_grad(node, out_grads):
    return [backward_node("reverse", [out_grads[0]], node, {"axis": node.attrs["axis"]}).output(0)]


register(OpDef(
    name="reverse",
    attrs={"axis": Attr("tuple")},
    infer_shape=_flip_shape, infer_type=same_type,
    gradient=_flip_grad,
    half_mirrors=True,
    kernels=kernels("prepare_flip"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Reverse the order of elements along the given axes."), aliases=("flip",))


# -- tile / repeat -------------------------------------------------------------------------

def tile_dims(reps, dshape, where="tile"):
    """(padded input shape, padded reps): the shorter one gets leading 1s."""
    # a 0 rep is refused as MXNet 1.x's tile refuses it (an unknown size there)
    if any(r is None or r < 1 for r in reps):
        raise shape_error(where, f"reps={tuple(reps)} must be positive ints", [dshape])
    n = max(len(reps), len(dshape))
    return ((1,) * (n - len(dshape)) + tuple(dshape), (1,) * (n - len(reps)) + tuple(reps))


def _tile_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    shp, reps = tile_dims(attrs["reps"], d)
    return in_shapes, [tuple(n * r for n, r in zip(shp, reps))]


def repeat_dims(attrs, dshape, where="repeat"):
    """(input shape as seen by repeat, axis): axis None works on the flattened input."""
    if attrs["repeats"] < 0:
        raise shape_error(where, f"repeats={attrs['repeats']} must be non-negative", [dshape])
    if attrs["axis"] is None:
        return (size_of(dshape),), 0
    return tuple(dshape), norm_axis(attrs["axis"], len(dshape), where, in_shapes=[dshape])


def _repeat_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    shp, axis = repeat_dims(attrs, d)
    out = list(shp)
    out[axis] *= attrs["repeats"]
    return in_shapes, [tuple(out)]


def backward_with_data(op_name, attr_keys):
    def grad(node, out_grads):
        attrs = {k: node.attrs[k] for k in attr_keys}
        return [backward_node(op_name, [out_grads[0], node.inputs[0]], node, attrs).output(0)]
    return grad


def forward_of_backward(op_name, attr_keys):
    """Gradient of a ``_backward_X(out_grad, data)`` op, which is linear in
    out_grad: X applied to the incoming gradient (data gets none)."""
    def grad(node, out_grads):
        attrs = {k: node.attrs[k] for k in attr_keys}
        return [backward_node(op_name, [out_grads[0]], node, attrs).output(0),
                None]
    return grad


def like_data_shape(attrs, in_shapes, out_shapes):
    """Backward ops whose output has the shape of their ``data`` input."""
    known = in_shapes[1] if in_shapes[1] is not None else out_shapes[0]
    return [in_shapes[0], known], [known]


def grad_type(attrs, in_types, out_types):
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


register(OpDef(
    name="tile",
    attrs={"reps": Attr("tuple")},
    infer_shape=_tile_shape, infer_type=same_type,
    gradient=backward_with_data("_backward_tile", ("reps",)),
    half_mirrors=True,
    kernels=kernels("prepare_tile"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Repeat the whole array ``reps`` times along each dim (numpy.tile)."))

register(OpDef(
    name="_backward_tile", input_names=("out_grad", "data"), hidden=True,
    attrs={"reps": Attr("tuple")},
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("tile", ("reps",)),
    half_mirrors=True,
    kernels=kernels("prepare_backward_tile"), supports_add=True,
    doc="Sum of the head gradient over the tiles; data is read for its shape only."))

register(OpDef(
    name="repeat",
    attrs={"repeats": Attr("int"), "axis": Attr("int", None, optional=True)},
    infer_shape=_repeat_shape, infer_type=same_type,
    gradient=backward_with_data("_backward_repeat", ("repeats", "axis")),
    half_mirrors=True,
    kernels=kernels("prepare_repeat"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Repeat each element ``repeats`` times along ``axis`` (flattened when None)."))

register(OpDef(
    name="_backward_repeat", input_names=("out_grad", "data"), hidden=True,
    attrs={"repeats": Attr("int"), "axis": Attr("int", None, optional=True)},
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("repeat", ("repeats", "axis")),
    half_mirrors=True,
    kernels=kernels("prepare_backward_repeat"), supports_add=True,
    doc="Sum of the head gradient over the repeats; data is read for its shape only."))
