"""Variable-length sequence ops: SequenceMask, SequenceLast, SequenceReverse.
Rules only (kernels in nbdl.kernels.*.sequence).

MXNet's semantics: ``data`` has the time axis at ``axis`` (0, the default:
``(T, N, ...)``; or 1: ``(N, T, ...)``) and the batch axis at the other of the
first two axes.  With ``use_sequence_length=True`` a second input
``sequence_length`` of shape ``(N,)`` (float or integer; float values are
truncated toward zero, as MXNet casts them) gives each batch element's
length; without it every sequence is ``T`` long and the op takes only
``data``.

- ``SequenceMask``: steps ``t >= length`` are set to ``value``.
- ``SequenceLast``: the step ``length - 1`` of each sequence (the time axis is
  removed); lengths are clipped to ``[1, T]``.
- ``SequenceReverse`` (``axis=0`` only, as MXNet): the first ``length`` steps
  of each sequence are reversed, the padding after them stays in place;
  lengths are clipped to ``[0, T]``.

Gradients flow to ``data`` only.  SequenceMask's gradient is SequenceMask of
the head gradient with ``value=0``; SequenceReverse's is SequenceReverse of
the head gradient (the permutation is its own inverse); SequenceLast's is a
hidden scatter ``_backward_SequenceLast(out_grad, [sequence_length], data)``
that reads ``data`` for its shape only.
"""
import math

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape

_LEN = {"use_sequence_length": Attr("bool", False,
                                    doc="Read per-sequence lengths from ``sequence_length``.")}
MASK_ATTRS = dict(_LEN, value=Attr("float", 0.0, doc="Value written at masked steps."),
                  axis=Attr("int", 0, doc="The time axis: 0 (TN...) or 1 (NT...)."))
LAST_ATTRS = dict(_LEN, axis=Attr("int", 0, doc="The time axis: 0 (TN...) or 1 (NT...)."))
REVERSE_ATTRS = dict(_LEN, axis=Attr("int", 0, doc="The time axis; only 0 is supported."))


def _input_names(opname, first=("data",), last=()):
    def names(attrs):
        allowed = (0,) if opname == "SequenceReverse" else (0, 1)
        if attrs["axis"] not in allowed:
            raise AttrError(f"{opname}: axis={attrs['axis']} is not supported: it must be "
                            f"{' or '.join(str(a) for a in allowed)}")
        return list(first) + (["sequence_length"] if attrs["use_sequence_length"] else []) + \
            list(last)
    return names


def batch_axis(attrs):
    return 1 - attrs["axis"]


def _check_data(opname, attrs, data, in_shapes):
    if len(data) < 2:
        raise shape_error(opname, f"data must have at least 2 dimensions (time and batch), "
                          f"got shape {tuple(data)}", in_shapes)


def _check_len(opname, attrs, data, lens, in_shapes):
    want = (int(data[batch_axis(attrs)]),)
    if lens is not None and tuple(lens) != want:
        raise shape_error(opname, f"sequence_length has shape {tuple(lens)}, expected {want} "
                          f"(the batch size of data {tuple(data)} with axis={attrs['axis']})",
                          in_shapes)
    return want


def last_shape(data, axis):
    return tuple(int(d) for i, d in enumerate(data) if i != axis)


def _same_shape(opname):
    def infer(attrs, in_shapes, out_shapes):
        data = known_shape(in_shapes[0], out_shapes[0])
        if data is None:
            return in_shapes, out_shapes
        _check_data(opname, attrs, data, in_shapes)
        if out_shapes[0] is not None and tuple(out_shapes[0]) != data:
            raise shape_error(opname, f"output shape {tuple(out_shapes[0])} does not match data "
                              f"shape {data}", in_shapes)
        ins = [data]
        if attrs["use_sequence_length"]:
            ins.append(_check_len(opname, attrs, data, in_shapes[1], in_shapes))
        return ins, [data]
    return infer


def _last_shape(attrs, in_shapes, out_shapes):
    opname = "SequenceLast"
    data = known_shape(in_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    _check_data(opname, attrs, data, in_shapes)
    want = last_shape(data, attrs["axis"])
    if out_shapes[0] is not None and tuple(out_shapes[0]) != want:
        raise shape_error(opname, f"output shape {tuple(out_shapes[0])} does not match data "
                          f"shape {data} with axis={attrs['axis']}: expected {want}", in_shapes)
    if data[attrs["axis"]] == 0 and math.prod(want) > 0:
        raise shape_error(opname, f"data shape {data} has no time steps along "
                          f"axis={attrs['axis']}", in_shapes)
    ins = [data]
    if attrs["use_sequence_length"]:
        ins.append(_check_len(opname, attrs, data, in_shapes[1], in_shapes))
    return ins, [want]


def _backward_last_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_SequenceLast"
    data = in_shapes[-1] if in_shapes[-1] is not None else out_shapes[0]
    if data is None:
        return in_shapes, out_shapes
    data = tuple(data)
    _check_data(opname, attrs, data, in_shapes)
    ins = [last_shape(data, attrs["axis"])]
    if attrs["use_sequence_length"]:
        ins.append(_check_len(opname, attrs, data, in_shapes[1], in_shapes))
    return ins + [data], [data]


def _type(attrs, in_types, out_types):
    """Output has the data's dtype; an unknown sequence_length takes it too."""
    d = in_types[0] if in_types[0] is not None else out_types[0]
    if d is None:
        return in_types, out_types
    ins = [d] + [t if t is not None else d for t in in_types[1:]]
    return ins, [d]


def _backward_last_type(attrs, in_types, out_types):
    g = next((t for t in (in_types[0], in_types[-1], out_types[0]) if t is not None), None)
    if g is None:
        return in_types, out_types
    mid = [t if t is not None else g for t in in_types[1:-1]]
    return [g] + mid + [g], [g]


def _lens(node):
    return [node.inputs[1]] if node.attrs["use_sequence_length"] else []


def _no_len_grad(node):
    return [None] if node.attrs["use_sequence_length"] else []


def _mask_grad(node, out_grads):
    g = backward_node("SequenceMask", [out_grads[0]] + _lens(node), node,
                      {"use_sequence_length": node.attrs["use_sequence_length"], "value": 0.0,
                       "axis": node.attrs["axis"]})
    return [g.output(0)] + _no_len_grad(node)


def _reverse_grad(node, out_grads):
    g = backward_node("SequenceReverse", [out_grads[0]] + _lens(node), node)
    return [g.output(0)] + _no_len_grad(node)


def _last_grad(node, out_grads):
    g = backward_node("_backward_SequenceLast", [out_grads[0]] + _lens(node) + [node.inputs[0]],
                      node)
    return [g.output(0)] + _no_len_grad(node)


register(OpDef(
    name="SequenceMask",
    half_mirrors=True,
    input_names=_input_names("SequenceMask"),
    attrs=dict(MASK_ATTRS),
    infer_shape=_same_shape("SequenceMask"), infer_type=_type,
    gradient=_mask_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("sequence", "prepare_sequence_mask"),
    supports_add=True, int_inputs=(1,),
    doc="Set the steps at or after each sequence's length to ``value``."))

register(OpDef(
    name="SequenceLast",
    half_mirrors=True,
    input_names=_input_names("SequenceLast"),
    attrs=dict(LAST_ATTRS),
    infer_shape=_last_shape, infer_type=_type,
    gradient=_last_grad,
    kernels=kernel_paths("sequence", "prepare_sequence_last"),
    supports_add=True, int_inputs=(1,),
    doc="The last valid step of each sequence (the time axis removed)."))

register(OpDef(
    name="_backward_SequenceLast",
    half_mirrors=True,
    input_names=_input_names("SequenceLast", first=("out_grad",), last=("data",)),
    attrs=dict(LAST_ATTRS),
    infer_shape=_backward_last_shape, infer_type=_backward_last_type,
    kernels=kernel_paths("sequence", "prepare_sequence_last_backward"),
    supports_add=True, hidden=True, int_inputs=(1,),
    shape_inputs=lambda attrs: (2,) if attrs["use_sequence_length"] else (1,),
    doc="Scatter of SequenceLast's head gradient into a zero gradient of data."))

register(OpDef(
    name="SequenceReverse",
    half_mirrors=True,
    input_names=_input_names("SequenceReverse"),
    attrs=dict(REVERSE_ATTRS),
    infer_shape=_same_shape("SequenceReverse"), infer_type=_type,
    gradient=_reverse_grad,
    kernels=kernel_paths("sequence", "prepare_sequence_reverse"),
    supports_add=True, int_inputs=(1,),
    doc="Reverse the first ``length`` steps of each sequence; padding stays in place."))
