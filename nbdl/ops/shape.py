"""Shape-manipulation ops that move data without arithmetic: Reshape
(MXNet 1.x's codes), _npx_reshape (MXNet 2's npx.reshape codes), Flatten,
expand_dims, squeeze, reshape_like, transpose, flip, tile, repeat (rules
only; kernels in nbdl.kernels.*.shape).  Concat, SliceChannel, slice
and slice_axis are in ``concat_slice``, imported at the bottom.

Reshape-like ops keep the element order, so their kernel is a flat copy that
may run in place.  transpose, flip, tile and repeat are strided gathers:
``strided_plan`` turns them into at most ``MAX_RANK`` (count, stride) pairs
that one kernel per device walks."""
import numpy as np

from ..dtype import ALL as _ALL_DTYPES
from .ir import make_node
from .elemwise_unary import same_shape, same_type
from .registry import Attr, OpDef, register, shape_error

# Data movement works for every dtype nbdl stores except float16 and bool
# (no arithmetic happens, but Numba's CPU float16 support is partial).
MOVE_DTYPES = tuple(d for d in _ALL_DTYPES if d not in (np.dtype(np.float16), np.dtype(np.bool_)))
MAX_RANK = 8  # dims a strided gather walks after merging (MXNet's transpose allows 6)

KERNELS = "nbdl.kernels.{}.shape:{}"


def kernels(prepare):
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def size_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


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
    return [make_node("reshape_like", [out_grads[0], node.inputs[0]],
                      name=f"{node.name}_backward").output(0)]


# -- Reshape -------------------------------------------------------------------

def _apply_reshape_codes(codes, dshape, reverse, where):
    """MXNet's special codes: 0 copy a dim, -1 infer one dim, -2 copy the rest,
    -3 merge two dims, -4 split one dim into the two that follow (one may be
    -1).  ``reverse`` applies them right to left (codes and dims reversed, as
    MXNet does, so a -4 then follows its two dims)."""
    def bad(msg):
        return shape_error(where, f"cannot reshape input of shape {tuple(dshape)} with "
                                  f"shape={tuple(codes)}, reverse={reverse}: {msg}")
    dims = list(reversed(dshape)) if reverse else list(dshape)
    spec = list(reversed(codes)) if reverse else list(codes)
    out, src, infer_at, i = [], 0, -1, 0
    while i < len(spec):
        c = spec[i]
        if c is None:
            raise bad("None is not a valid dim")
        if c == 0:
            if src >= len(dims):
                raise bad(f"code 0 at position {i} has no input dim left to copy")
            out.append(dims[src])
            src += 1
        elif c == -1:
            if infer_at >= 0:
                raise bad("only one dim can be inferred (-1)")
            # The output position, not the code position (MXNet mixes the two
            # when -2/-3/-4 come before -1 and then fails the size check).
            infer_at = len(out)
            out.append(1)
            src += 1
        elif c == -2:
            out.extend(dims[src:])
            src = len(dims)
        elif c == -3:
            if src + 1 >= len(dims):
                raise bad(f"code -3 at position {i} needs two input dims")
            out.append(dims[src] * dims[src + 1])
            src += 2
        elif c == -4:
            if i + 2 >= len(spec):
                raise bad(f"code -4 at position {i} must be followed by two dims")
            if src >= len(dims):
                raise bad(f"code -4 at position {i} has no input dim left to split")
            d0 = dims[src]
            src += 1
            d1, d2 = spec[i + 1], spec[i + 2]
            i += 2
            if d1 is None or d2 is None or d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0:
                raise bad(f"split dims after -4 must be positive or -1, got {d1}, {d2}")
            if d1 == -1 and d2 == -1:
                raise bad("split dims after -4 cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise bad(f"split dims {d1}, {d2} do not multiply to input dim {d0}")
            out.extend([d1, d2])
        elif c > 0:
            out.append(c)
            src += 1
        else:
            raise bad(f"unknown code {c}")
        i += 1
    if infer_at >= 0:
        known = size_of(out)
        if known == 0:
            raise bad("-1 cannot be inferred next to a zero-size dim")
        out[infer_at] = size_of(dshape) // known
    if reverse:
        out.reverse()
    out = tuple(out)
    if size_of(out) != size_of(dshape):
        raise bad(f"the result {out} has {size_of(out)} elements, the input has {size_of(dshape)}")
    return out


def _legacy_target(attrs, dshape, where):
    """The deprecated ``target_shape`` (0 = infer) with ``keep_highest``."""
    target = list(attrs["target_shape"])
    start = 1 if attrs["keep_highest"] else 0
    if attrs["keep_highest"]:
        if not target or not dshape:
            raise shape_error(where, "keep_highest needs a target_shape and an input with dims")
        target[0] = dshape[0]
    zeros = [i for i in range(start, len(target)) if target[i] == 0]
    if len(zeros) > 1:
        raise shape_error(where, f"target_shape={attrs['target_shape']} may infer one dim (0), not "
                                 f"{len(zeros)}", [dshape])
    if zeros:
        target[zeros[0]] = 1
        known = size_of(target)
        target[zeros[0]] = size_of(dshape) // known if known else 0
    out = tuple(target)
    if size_of(out) != size_of(dshape):
        raise shape_error(where, f"cannot reshape input of shape {tuple(dshape)} to "
                                 f"target_shape={attrs['target_shape']} "
                                 f"(keep_highest={attrs['keep_highest']})")
    return out


def reshape_output_shape(attrs, dshape, where="Reshape"):
    shape, target = attrs["shape"], attrs["target_shape"]
    if shape and target:
        raise shape_error(where, f"give shape={shape} or the legacy target_shape={target}, not both")
    if attrs["keep_highest"] and not target:
        raise shape_error(where, "keep_highest applies only to the legacy target_shape")
    if target:
        return _legacy_target(attrs, tuple(dshape), where)
    if not shape:
        raise shape_error(where, "the target shape is missing (attribute shape)")
    return _apply_reshape_codes(shape, tuple(dshape), attrs["reverse"], where)


def _reshape_shape(attrs, in_shapes, out_shapes):
    if in_shapes[0] is None:
        return in_shapes, out_shapes
    return in_shapes, [reshape_output_shape(attrs, in_shapes[0])]


register(OpDef(
    name="Reshape",
    attrs={"shape": Attr("tuple", ()), "reverse": Attr("bool", False),
           "target_shape": Attr("tuple", ()), "keep_highest": Attr("bool", False)},
    infer_shape=_reshape_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Reshape with MXNet's special codes 0, -1, -2, -3, -4 and ``reverse``."),
    aliases=("reshape",))


# -- _npx_reshape (MXNet 2's npx.reshape) ------------------------------------------------

def npx_reshape_output_shape(newshape, dshape, reverse, where="_npx_reshape"):
    """MXNet 2's ``npx.reshape`` codes: a size >= 0 is a new dim (0 is a
    zero-length dim, not "copy"), -1 infers one dim, -2 copies one input dim,
    -3 drops an input dim of size 1, -4 copies all remaining input dims, -5
    merges two input dims, -6 splits one input dim into the two values that
    follow it (one may be -1).  A new dim and -1 also step over one input dim.
    ``reverse`` reverses the input dims and the codes, applies them, and
    reverses the result, so a reversed -6 is written after its two values."""
    dshape = tuple(dshape)

    def bad(msg):
        return shape_error(where, f"cannot reshape input of shape {dshape} into "
                                  f"newshape={tuple(newshape)} (reverse={reverse}): {msg}")
    dims = list(reversed(dshape)) if reverse else list(dshape)
    spec = list(reversed(newshape)) if reverse else list(newshape)
    out, src, infer_at, i = [], 0, -1, 0

    def claim_infer(pos):
        nonlocal infer_at
        if infer_at >= 0:
            raise bad("only one dim can be inferred (-1)")
        infer_at = pos

    while i < len(spec):
        c = spec[i]
        if c is None:
            raise bad("None is not a valid dim")
        if c >= 0:
            out.append(c)
            src += 1
        elif c == -1:
            claim_infer(len(out))
            out.append(1)
            src += 1
        elif c == -2:
            if src >= len(dims):
                raise bad(f"code -2 at position {i} has no input dim left to copy")
            out.append(dims[src])
            src += 1
        elif c == -3:
            if src >= len(dims):
                raise bad(f"code -3 at position {i} has no input dim left to skip")
            if dims[src] != 1:
                raise bad(f"code -3 at position {i} skips only a dim of size 1, "
                          f"the input dim is {dims[src]}")
            src += 1
        elif c == -4:
            out.extend(dims[src:])
            src = len(dims)
        elif c == -5:
            if src + 1 >= len(dims):
                raise bad(f"code -5 at position {i} needs two input dims to merge")
            out.append(dims[src] * dims[src + 1])
            src += 2
        elif c == -6:
            if i + 2 >= len(spec):
                raise bad(f"code -6 at position {i} must be followed by two dims")
            if src >= len(dims):
                raise bad(f"code -6 at position {i} has no input dim left to split")
            d0 = dims[src]
            src += 1
            d1, d2 = spec[i + 1], spec[i + 2]
            i += 2
            if d1 is None or d2 is None or d1 < -1 or d2 < -1:
                raise bad(f"split dims after -6 must be sizes >= 0 or -1, got {d1}, {d2}")
            if d1 == -1 and d2 == -1:
                raise bad("split dims after -6 cannot both be -1")
            if d1 == -1 or d2 == -1:
                known = d2 if d1 == -1 else d1
                if known == 0:
                    raise bad(f"split dims {d1}, {d2}: -1 cannot be inferred next to a 0")
                if d1 == -1:
                    d1 = d0 // known
                else:
                    d2 = d0 // known
            if d1 * d2 != d0:
                raise bad(f"split dims {d1}, {d2} do not multiply to input dim {d0}")
            out.extend([d1, d2])
        else:
            raise bad(f"unknown code {c} (codes are -1 to -6)")
        i += 1
    total = size_of(dshape)
    if infer_at >= 0:
        known = size_of(out)
        if known == 0:
            raise bad("-1 cannot be inferred next to a zero-size dim")
        if total % known:
            raise bad(f"-1 cannot be inferred: {total} elements do not divide by {known}")
        out[infer_at] = total // known
    if reverse:
        out.reverse()
    out = tuple(out)
    if size_of(out) != total:
        raise bad(f"the result {out} has {size_of(out)} elements, the input has {total}")
    return out


def _npx_reshape_shape(attrs, in_shapes, out_shapes):
    if in_shapes[0] is None:
        return in_shapes, out_shapes
    return in_shapes, [npx_reshape_output_shape(attrs["newshape"], in_shapes[0],
                                                attrs["reverse"])]


register(OpDef(
    name="_npx_reshape",
    input_names=("a",),
    attrs={"newshape": Attr("tuple"), "reverse": Attr("bool", False),
           "order": Attr("str", "C", choices=("C",))},
    infer_shape=_npx_reshape_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="MXNet 2's npx.reshape: codes -1 (infer), -2 (copy a dim), -3 (drop a size-1 dim), "
        "-4 (copy the rest), -5 (merge two dims), -6 (split a dim into the two values "
        "that follow); sizes >= 0 are new dims; ``reverse`` works right to left."),
    aliases=("_npi_reshape",))


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
    return [make_node("reshape_like", [out_grads[0], node.inputs[0]],
                      name=f"{node.name}_backward").output(0), None]


register(OpDef(
    name="reshape_like",
    input_names=("lhs", "rhs"), shape_inputs=(1,),
    attrs={k: Attr("int", None, optional=True)
           for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
    infer_shape=_reshape_like_shape, infer_type=_reshape_like_type,
    gradient=_reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
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


def _transpose_shape(attrs, in_shapes, out_shapes):
    d, o = in_shapes[0], out_shapes[0]
    if d is not None:
        axes = transpose_axes(attrs["axes"], len(d), in_shapes=in_shapes)
        return in_shapes, [tuple(d[a] for a in axes)]
    if o is not None:
        axes = transpose_axes(attrs["axes"], len(o), in_shapes=in_shapes)
        src = [0] * len(o)
        for i, a in enumerate(axes):
            src[a] = o[i]
        return [tuple(src)], out_shapes
    return in_shapes, out_shapes


def _transpose_grad(node, out_grads):
    axes = node.attrs["axes"]
    attrs = {}
    if axes:
        inv = [0] * len(axes)
        for i, a in enumerate(axes):
            inv[a % len(axes)] = i
        attrs["axes"] = tuple(inv)
    return [make_node("transpose", [out_grads[0]], attrs, name=f"{node.name}_backward").output(0)]


register(OpDef(
    name="transpose",
    attrs={"axes": Attr("tuple", ())},
    infer_shape=_transpose_shape, infer_type=same_type,
    gradient=_transpose_grad,
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
    return [make_node("reverse", [out_grads[0]], {"axis": node.attrs["axis"]},
                      name=f"{node.name}_backward").output(0)]


register(OpDef(
    name="reverse",
    attrs={"axis": Attr("tuple")},
    infer_shape=_flip_shape, infer_type=same_type,
    gradient=_flip_grad,
    kernels=kernels("prepare_flip"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Reverse the order of elements along the given axes."), aliases=("flip",))


# -- tile / repeat -------------------------------------------------------------------------

def tile_dims(reps, dshape, where="tile"):
    """(padded input shape, padded reps): the shorter one gets leading 1s."""
    if any(r is None or r < 0 for r in reps):
        raise shape_error(where, f"reps={tuple(reps)} must be non-negative ints", [dshape])
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
        return [make_node(op_name, [out_grads[0], node.inputs[0]], attrs,
                          name=f"{node.name}_backward").output(0)]
    return grad


def forward_of_backward(op_name, attr_keys):
    """Gradient of a ``_backward_X(out_grad, data)`` op, which is linear in
    out_grad: X applied to the incoming gradient (data gets none)."""
    def grad(node, out_grads):
        attrs = {k: node.attrs[k] for k in attr_keys}
        return [make_node(op_name, [out_grads[0]], attrs, name=f"{node.name}_backward").output(0),
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
    kernels=kernels("prepare_tile"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Repeat the whole array ``reps`` times along each dim (numpy.tile)."))

register(OpDef(
    name="_backward_tile", input_names=("out_grad", "data"), hidden=True,
    attrs={"reps": Attr("tuple")},
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("tile", ("reps",)),
    kernels=kernels("prepare_backward_tile"), supports_add=True,
    doc="Sum of the head gradient over the tiles; data is read for its shape only."))

register(OpDef(
    name="repeat",
    attrs={"repeats": Attr("int"), "axis": Attr("int", None, optional=True)},
    infer_shape=_repeat_shape, infer_type=same_type,
    gradient=backward_with_data("_backward_repeat", ("repeats", "axis")),
    kernels=kernels("prepare_repeat"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Repeat each element ``repeats`` times along ``axis`` (flattened when None)."))

register(OpDef(
    name="_backward_repeat", input_names=("out_grad", "data"), hidden=True,
    attrs={"repeats": Attr("int"), "axis": Attr("int", None, optional=True)},
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("repeat", ("repeats", "axis")),
    kernels=kernels("prepare_backward_repeat"), supports_add=True,
    doc="Sum of the head gradient over the repeats; data is read for its shape only."))


from . import concat_slice  # noqa: E402,F401  (the rest of the family)
