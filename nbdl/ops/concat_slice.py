"""Joining and cutting: Concat, SliceChannel (split), _split_v2, slice,
slice_axis and their hidden backward ops (rules only; kernels in
nbdl.kernels.*.shape).  Writing into a window (``_slice_assign``) is in
``nbdl.ops.slice_assign``.

The backward ops of Concat, slice and slice_axis take the forward inputs as
extra inputs for their *shapes* only (a gradient rule is built before shapes
are known); the kernels never read them."""
from ..errors import ArgumentError
from .ir import backward_node, make_node
from .partial_shape import UNKNOWN, accepts_partial, merge
from .registry import Attr, OpDef, register, shape_error
from .shape import (MOVE_DTYPES, c_strides, forward_of_backward, grad_type, kernels,
                    like_data_shape, norm_axis, same_type)


# -- Concat -------------------------------------------------------------------------

def _concat_partial(attrs, in_shapes, out_shapes):
    """Concat on partial shapes (MXNet's ConcatShape): the dims outside
    ``dim`` merged over the inputs and the output; the output's ``dim`` the
    sum once every input's is known, else one input's from the output's."""
    ref = next(s for s in list(in_shapes) + list(out_shapes) if s is not None)
    d = norm_axis(attrs["dim"], len(ref), "Concat", "dim", in_shapes)

    def outside(s):
        return None if s is None else tuple(s[:d]) + (UNKNOWN,) + tuple(s[d + 1:])
    common = None
    for i, s in enumerate(list(in_shapes) + list(out_shapes)):
        if s is not None and len(s) != len(ref):
            raise shape_error("Concat", f"shapes {tuple(ref)} and {tuple(s)} differ in rank",
                              in_shapes)
        common = merge(common, outside(s), "Concat", "the dims outside 'dim'")
    ins = [merge(s, common, "Concat", f"arg{i}") for i, s in enumerate(in_shapes)]
    out = merge(out_shapes[0], common, "Concat", "the output")
    sizes = [s[d] for s in ins]
    unknown = [i for i, n in enumerate(sizes) if n < 0]
    if not unknown:
        out = out[:d] + (sum(sizes),) + out[d + 1:]
    elif len(unknown) == 1 and out[d] >= 0:
        rest = out[d] - sum(n for n in sizes if n >= 0)
        if rest < 0:
            raise shape_error("Concat", f"the inputs add up to more than the output's "
                              f"{out[d]} along dim {d}", in_shapes)
        i = unknown[0]
        ins[i] = ins[i][:d] + (rest,) + ins[i][d + 1:]
    return ins, [merge(out_shapes[0], out, "Concat", "the output")]


@accepts_partial
def _concat_shape(attrs, in_shapes, out_shapes):
    if any(s is not None and min(s, default=0) < 0 for s in list(in_shapes) + list(out_shapes)):
        return _concat_partial(attrs, in_shapes, out_shapes)
    out = out_shapes[0]
    known = [s for s in in_shapes if s is not None]
    ref = known[0] if known else out
    if ref is None:
        return in_shapes, out_shapes
    where = "Concat"
    ndim = len(ref)
    d = norm_axis(attrs["dim"], ndim, where, "dim", in_shapes)

    def agree(s):
        return len(s) == ndim and all(s[k] == ref[k] for k in range(ndim) if k != d)
    for i, s in enumerate(in_shapes):
        if s is not None and not agree(s):
            raise shape_error(where, f"arg{i} of shape {s} does not match {ref} outside dim {d}",
                              in_shapes)
    if out is not None and not agree(out):
        raise shape_error(where, f"output shape {out} does not match the inputs outside dim {d}",
                          in_shapes)
    missing = [i for i, s in enumerate(in_shapes) if s is None]
    total = sum(s[d] for s in known)
    if not missing:
        return in_shapes, [tuple(ref[:d]) + (total,) + tuple(ref[d + 1:])]
    if out is not None and len(missing) == 1:
        rest = out[d] - total
        if rest < 0:
            raise shape_error(where, f"the inputs add up to {total} along dim {d}, more than the "
                                     f"output shape {out} holds", in_shapes)
        in_shapes = list(in_shapes)
        in_shapes[missing[0]] = tuple(out[:d]) + (rest,) + tuple(out[d + 1:])
    return in_shapes, out_shapes


def _concat_grad(node, out_grads):
    n = node.attrs["num_args"]
    bw = backward_node("_backward_Concat", [out_grads[0]] + list(node.inputs), node,
                       {"num_args": n, "dim": node.attrs["dim"]})
    return [bw.output(i) for i in range(n)]


def _args(attrs):
    return [f"arg{i}" for i in range(attrs["num_args"])]


def _concat_op(name, infer_shape, doc, hidden=False):
    """A Concat-family OpDef (Concat, _rnn_param_concat): the same inputs,
    attributes, kernels and gradient; its own shape rule."""
    return OpDef(
        name=name, hidden=hidden,
        input_names=_args, key_var_num_args="num_args",
        attrs={"num_args": Attr("int"), "dim": Attr("int", 1)},
        infer_shape=infer_shape, infer_type=same_type,
        gradient=_concat_grad,
        half_mirrors=True,
        kernels=kernels("prepare_concat"), supports_add=True, dtypes=MOVE_DTYPES,
        doc=doc)


register(_concat_op("Concat", _concat_shape, "Join the inputs along ``dim``."),
         aliases=("concat",))


@accepts_partial
def _rnn_param_concat_shape(attrs, in_shapes, out_shapes):
    """MXNet's RNNParamConcatShape: Concat's, except that when the output's
    size along ``dim`` is known and two inputs' are not (a Gluon 1.x RNN
    layer's first-layer weights before deferred initialisation), the
    remainder is shared evenly between them; more than two is an error."""
    out = out_shapes[0]
    if out is not None and len(out) and min(out) >= 0:
        d = norm_axis(attrs["dim"], len(out), "_rnn_param_concat", "dim", in_shapes)
        unknown = [i for i, s in enumerate(in_shapes) if s is None or s[d] < 0]
        if len(unknown) > 2:
            raise shape_error("_rnn_param_concat", f"expects one or two inputs whose size along "
                              f"dim {d} is inferred from the output, got {len(unknown)}",
                              in_shapes)
        if len(unknown) == 2:
            rest = out[d] - sum(s[d] for i, s in enumerate(in_shapes) if i not in unknown)
            if rest < 0:
                raise shape_error("_rnn_param_concat", f"the inputs add up to more than the "
                                  f"output's {out[d]} along dim {d}", in_shapes)
            in_shapes = list(in_shapes)
            for i in unknown:
                in_shapes[i] = tuple(out[:d]) + (rest // 2,) + tuple(out[d + 1:])
    return _concat_shape(attrs, in_shapes, out_shapes)


register(_concat_op("_rnn_param_concat", _rnn_param_concat_shape,
                    "Concat of a fused RNN's flattened parameters (MXNet 1.x Gluon's RNN "
                    "layers export it): Concat, with the shape rule of "
                    "``_rnn_param_concat_shape``.", hidden=True),
         aliases=("_npi_rnn_param_concat",))


def _backward_concat_shape(attrs, in_shapes, out_shapes):
    carriers = [c if c is not None else o for c, o in zip(in_shapes[1:], out_shapes)]
    return [in_shapes[0]] + carriers, carriers


def _backward_concat_grad(node, out_grads):
    # Linear in the head gradient: its gradient joins the output gradients again.
    n = node.attrs["num_args"]
    cat = backward_node("Concat", list(out_grads), node, {"num_args": n, "dim": node.attrs["dim"]})
    return [cat.output(0)] + [None] * n


register(OpDef(
    name="_backward_Concat", hidden=True,
    input_names=lambda attrs: ["out_grad"] + _args(attrs),
    shape_inputs=lambda attrs: tuple(range(1, attrs["num_args"] + 1)),
    num_outputs=lambda attrs: attrs["num_args"],
    attrs={"num_args": Attr("int"), "dim": Attr("int", 1)},
    infer_shape=_backward_concat_shape, infer_type=grad_type,
    gradient=_backward_concat_grad,
    half_mirrors=True,
    kernels=kernels("prepare_backward_concat"), supports_add=True,
    doc="Cut the head gradient into the inputs' pieces; arg_i are read for their shapes only."))


# -- SliceChannel -----------------------------------------------------------------------

def split_axis(attrs, ndim, where="SliceChannel", in_shapes=None):
    if attrs["num_outputs"] < 1:
        raise shape_error(where, f"num_outputs={attrs['num_outputs']} must be at least 1", in_shapes)
    return norm_axis(attrs["axis"], ndim, where, in_shapes=in_shapes)


def _split_shape(attrs, in_shapes, out_shapes):
    n, squeeze = attrs["num_outputs"], attrs["squeeze_axis"]
    where = "SliceChannel"
    d = in_shapes[0]
    if d is not None:
        a = split_axis(attrs, len(d), where, in_shapes)
        if d[a] % n:
            raise shape_error(where, f"axis {a} of size {d[a]} does not split into "
                                     f"num_outputs={n} equal parts", in_shapes)
        if squeeze and d[a] != n:
            raise shape_error(where, f"squeeze_axis needs axis {a} of size num_outputs={n}, "
                                     f"not {d[a]}", in_shapes)
        piece = tuple(d[:a]) + (() if squeeze else (d[a] // n,)) + tuple(d[a + 1:])
        return in_shapes, [piece] * n
    o = next((s for s in out_shapes if s is not None), None)
    if o is None:
        return in_shapes, out_shapes
    if squeeze:
        a = split_axis(attrs, len(o) + 1, where, in_shapes)
        return [tuple(o[:a]) + (n,) + tuple(o[a:])], [o] * n
    a = split_axis(attrs, len(o), where, in_shapes)
    return [tuple(o[:a]) + (o[a] * n,) + tuple(o[a + 1:])], [o] * n


def _split_grad(node, out_grads):
    """SliceChannel's and _split_v2's: the pieces' gradients joined again."""
    attrs = node.attrs
    grads = list(out_grads)
    if attrs["squeeze_axis"]:
        grads = [make_node("expand_dims", [g], {"axis": attrs["axis"]},
                           name=f"{node.name}_backward_expand{i}").output(0)
                 for i, g in enumerate(grads)]
    cat = backward_node("Concat", grads, node, {"num_args": len(grads), "dim": attrs["axis"]})
    return [cat.output(0)]


register(OpDef(
    name="SliceChannel",
    num_outputs=lambda attrs: attrs["num_outputs"],
    output_names=lambda attrs: [f"output{i}" for i in range(attrs["num_outputs"])],
    attrs={"num_outputs": Attr("int"), "axis": Attr("int", 1), "squeeze_axis": Attr("bool", False)},
    infer_shape=_split_shape, infer_type=same_type,
    gradient=_split_grad,
    half_mirrors=True,
    kernels=kernels("prepare_split"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Split into ``num_outputs`` equal parts along ``axis``."), aliases=("split",))


# -- _split_v2 -------------------------------------------------------------------------

def split_v2_bounds(attrs, dshape, where="_split_v2", in_shapes=None):
    """``(axis, [(start, end)] per output)`` of MXNet's split_v2: ``sections``
    near-equal parts (the first ``size % sections`` one longer), or the
    pieces between ``indices`` (each output from ``indices[i]`` to the next
    index, the last to the end of the axis)."""
    a = norm_axis(attrs["axis"], len(dshape), where, in_shapes=in_shapes)
    n = int(dshape[a])
    sections, indices = attrs["sections"], tuple(attrs["indices"])
    if sections > 0:
        small, extra = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            end = start + small + (1 if i < extra else 0)
            bounds.append((start, end))
            start = end
    else:
        if not indices:
            raise shape_error(where, "needs indices (or sections > 0)", in_shapes)
        ends = list(indices[1:]) + [n]
        bounds = [(int(b), int(e)) if n else (int(b), int(b)) for b, e in zip(indices, ends)]
        for i, (b, e) in enumerate(bounds):
            if n and not 0 <= b <= e <= n:
                raise shape_error(where, f"piece {i} runs from {b} to {e}, not inside axis {a} "
                                  f"of size {n} (indices={indices})", in_shapes)
    if attrs["squeeze_axis"] and any(e - b != 1 for b, e in bounds):
        raise shape_error(where, f"squeeze_axis needs pieces of size 1 along axis {a}, got "
                          f"{[e - b for b, e in bounds]}", in_shapes)
    return a, bounds


def split_v2_attrs(indices_or_sections, axis=0, squeeze_axis=False, shape=None):
    """The ``_split_v2`` attributes of MXNet's ``split_v2(ary,
    indices_or_sections, axis, squeeze_axis)`` (the Python front end of
    ``nd``, ``sym`` and ``NDArray.split_v2``).

    Parameters
    ----------
    indices_or_sections : int or tuple of int
        An int: that many pieces; a tuple: the positions along ``axis`` where
        a new piece starts.
    axis : int
        The axis to split.
    squeeze_axis : bool
        Drop ``axis`` from the pieces.
    shape : tuple of int, optional
        The array's shape (``nd``): an int then gives equal pieces at explicit
        indices and the axis must divide evenly, as MXNet's ``nd.split_v2``
        checks; without it (``sym``) an int becomes ``sections``.
    """
    if isinstance(indices_or_sections, bool) or not isinstance(indices_or_sections, (int, tuple)):
        raise ArgumentError("split_v2: indices_or_sections must either int or tuple of ints")
    attrs = {"axis": axis, "squeeze_axis": squeeze_axis}
    if not isinstance(indices_or_sections, int):
        return dict(attrs, indices=(0,) + tuple(indices_or_sections), sections=0)
    if shape is None:
        return dict(attrs, indices=(), sections=indices_or_sections)
    size = shape[norm_axis(axis, len(shape), "split_v2", in_shapes=[shape])]
    if indices_or_sections < 1 or size % indices_or_sections:
        raise ArgumentError(f"split_v2: axis {axis} of size {size} does not split into "
                            f"{indices_or_sections} equal pieces")
    step = size // indices_or_sections
    return dict(attrs, indices=tuple(i * step for i in range(indices_or_sections)), sections=0)


def split_v2_outputs(attrs):
    return attrs["sections"] if attrs["sections"] > 0 else len(attrs["indices"])


def _split_v2_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    a, bounds = split_v2_bounds(attrs, d, in_shapes=in_shapes)
    squeeze = attrs["squeeze_axis"]
    outs = [tuple(d[:a]) + (() if squeeze else (e - b,)) + tuple(d[a + 1:]) for b, e in bounds]
    return in_shapes, outs


register(OpDef(
    name="_split_v2",
    num_outputs=split_v2_outputs,
    output_names=lambda attrs: [f"output{i}" for i in range(split_v2_outputs(attrs))],
    attrs={"indices": Attr("tuple", (), doc="Start of each piece along axis (from 0)."),
           "axis": Attr("int", 1), "squeeze_axis": Attr("bool", False),
           "sections": Attr("int", 0, doc="Number of near-equal pieces (0: use indices).")},
    infer_shape=_split_v2_shape, infer_type=same_type,
    gradient=_split_grad,
    half_mirrors=True,
    kernels=kernels("prepare_split_v2"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Split along ``axis`` at ``indices`` or into ``sections`` pieces (MXNet's "
        "split_v2; ``nd.split_v2(ary, indices_or_sections)`` builds the attributes)."),
    aliases=("_npi_split",))


# -- slice -------------------------------------------------------------------------------

def slice_ranges(attrs, dshape, where="slice"):
    """(start, step, count) per input dim, with Python's (= MXNet 1.9's)
    clamping of out-of-range begin/end."""
    begin, end, step = attrs["begin"], attrs["end"], attrs["step"]
    if len(begin) != len(end):
        raise shape_error(where, f"begin={begin} and end={end} differ in length", [dshape])
    if step and len(step) != len(begin):
        raise shape_error(where, f"step={step} and begin={begin} differ in length", [dshape])
    if len(begin) > len(dshape):
        raise shape_error(where, f"begin={begin} has more entries than the input has dims", [dshape])
    out = []
    for i, n in enumerate(dshape):
        if i >= len(begin):
            out.append((0, 1, n))
            continue
        s = step[i] if step and step[i] is not None else 1
        if s == 0:
            raise shape_error(where, f"step[{i}] cannot be 0", [dshape])
        start, stop, s = slice(begin[i], end[i], s).indices(n)
        out.append((start, s, len(range(start, stop, s))))
    return out


def slice_gather(attrs, dshape):
    """(output shape, element strides into the input, base offset)."""
    ranges = slice_ranges(attrs, dshape)
    strides = c_strides(dshape)
    base = sum(start * st for (start, _, _), st in zip(ranges, strides))
    return (tuple(c for _, _, c in ranges), tuple(s * st for (_, s, _), st in zip(ranges, strides)),
            base)


@accepts_partial
def _slice_shape(attrs, in_shapes, out_shapes):
    # an unknown input dim gives an unknown output dim (MXNet's SliceOpShape)
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    counts = slice_ranges(attrs, tuple(max(n, 0) for n in d))
    out = tuple(UNKNOWN if n < 0 else c for n, (_, _, c) in zip(d, counts))
    return in_shapes, [merge(out, out_shapes[0], "slice", "the output")]


_SLICE_ATTRS = {"begin": Attr("tuple"), "end": Attr("tuple"), "step": Attr("tuple", ())}


def _slice_grad(node, out_grads):
    bw = backward_node("_backward_slice", [out_grads[0], node.inputs[0]], node,
                       {k: node.attrs[k] for k in _SLICE_ATTRS})
    return [bw.output(0)]


register(OpDef(
    name="slice",
    attrs=dict(_SLICE_ATTRS),
    infer_shape=_slice_shape, infer_type=same_type,
    gradient=_slice_grad,
    half_mirrors=True,
    kernels=kernels("prepare_slice"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="data[begin:end:step] per leading dim; None and negative indices as in Python."),
    aliases=("crop",))

register(OpDef(
    name="_backward_slice", hidden=True, input_names=("out_grad", "data"), shape_inputs=(1,),
    attrs=dict(_SLICE_ATTRS),
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("slice", tuple(_SLICE_ATTRS)),
    half_mirrors=True,
    kernels=kernels("prepare_backward_slice"), supports_add=True,
    doc="Zeros with the head gradient written into the sliced window; data gives the shape."))


# -- slice_axis -----------------------------------------------------------------------------

def slice_axis_range(attrs, dshape, where="slice_axis"):
    """(axis, begin, end) normalised, with MXNet's checks (non-empty window)."""
    a = norm_axis(attrs["axis"], len(dshape), where, in_shapes=[dshape])
    n = dshape[a]
    b, e = attrs["begin"], attrs["end"]
    if n == 0:
        return a, 0, 0
    b = b + n if b < 0 else b
    e = n if e is None else (e + n if e < 0 else e)
    if not 0 <= b < e <= n:
        raise shape_error(where, f"begin={attrs['begin']}, end={attrs['end']} is not a non-empty "
                                 f"window of axis {a} (size {n})", [dshape])
    return a, b, e


@accepts_partial
def _slice_axis_shape(attrs, in_shapes, out_shapes):
    # an unknown axis stays unknown; the other dims pass, known or not
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    a = norm_axis(attrs["axis"], len(d), "slice_axis", in_shapes=[d])
    if d[a] >= 0:
        a, b, e = slice_axis_range(attrs, d)
        d = tuple(d[:a]) + (e - b,) + tuple(d[a + 1:])
    return in_shapes, [merge(d, out_shapes[0], "slice_axis", "the output")]


_SLICE_AXIS_ATTRS = {"axis": Attr("int"), "begin": Attr("int"), "end": Attr("int", None, optional=True)}


def _slice_axis_grad(node, out_grads):
    bw = backward_node("_backward_slice_axis", [out_grads[0], node.inputs[0]], node,
                       {k: node.attrs[k] for k in _SLICE_AXIS_ATTRS})
    return [bw.output(0)]


register(OpDef(
    name="slice_axis",
    attrs=dict(_SLICE_AXIS_ATTRS),
    infer_shape=_slice_axis_shape, infer_type=same_type,
    gradient=_slice_axis_grad,
    half_mirrors=True,
    kernels=kernels("prepare_slice_axis"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="data[..., begin:end, ...] along ``axis`` (end None: to the end)."))

register(OpDef(
    name="_backward_slice_axis", hidden=True, input_names=("out_grad", "data"), shape_inputs=(1,),
    attrs=dict(_SLICE_AXIS_ATTRS),
    infer_shape=like_data_shape, infer_type=grad_type,
    gradient=forward_of_backward("slice_axis", tuple(_SLICE_AXIS_ATTRS)),
    half_mirrors=True,
    kernels=kernels("prepare_backward_slice_axis"), supports_add=True,
    doc="Zeros with the head gradient written into the window; data gives the shape."))
