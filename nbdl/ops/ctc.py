"""CTCLoss (connectionist temporal classification): rules only (kernels in
nbdl.kernels.*.ctc).

As in MXNet, ``data`` holds unnormalised activations ``(T, N, C)`` (time,
batch, alphabet including the blank); the op applies log-softmax over ``C``
itself.  ``label`` is ``(N, L)``, padded.  The blank is channel 0
(``blank_label='first'``, MXNet's default; labels are 1..C-1 and the padding
value is 0) or channel C-1 (``'last'``, what Gluon's ``CTCLoss`` block uses;
labels are 0..C-2 and the padding value is -1).  Without ``label_lengths`` a
sample's label ends at its first padding value; with them, the padding is
ignored.  ``data_lengths`` (``use_data_lengths``) gives each sample's number
of valid time steps.

Outputs: ``out`` ``(N,)``, the negative log-likelihood of each sample, and a
hidden ``grad`` ``(T, N, C)``: the gradient of ``out[n]`` with respect to
``data[:, n, :]``, computed in the forward pass by the forward-backward
(alpha/beta) recursion, as MXNet does.  Time steps past a sample's length
get a zero gradient.  A label that no alignment can produce (too long for
the sample's time steps) gives ``out = inf`` and a zero gradient.  The
backward op only scales: ``data_grad = out_grad[n] * grad``.
"""
import numpy as np

from ..errors import NbdlError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape

CTC_ATTRS = {
    "use_data_lengths": Attr("bool", False,
                             doc="Take each sample's number of time steps from data_lengths."),
    "use_label_lengths": Attr("bool", False,
                              doc="Take each label's length from label_lengths (padding ignored)."),
    "blank_label": Attr("str", "first", choices=("first", "last"),
                        doc="The blank is channel 0 ('first', padding 0) or C-1 ('last', "
                            "padding -1)."),
}

# codes a kernel raises CTCInputError with: (code, sample, position, value, limit)
BAD_LABEL, BAD_DATA_LENGTH, BAD_LABEL_LENGTH = 1, 2, 3


class CTCInputError(NbdlError, ValueError):
    """A label value or a length that a CTCLoss kernel found out of range.

    Raised from compiled code with ``(code, sample, position, value, limit,
    blank)``; the message is built here."""

    def __str__(self):
        if len(self.args) != 6:
            return " ".join(str(a) for a in self.args)
        code, n, j, value, limit, blank = self.args
        if code == BAD_LABEL:
            return (f"CTCLoss: label[{n}, {j}] = {value} is not a valid class: labels must lie in "
                    f"[0, {limit}) (integers; the blank label is {blank})")
        if code == BAD_DATA_LENGTH:
            return (f"CTCLoss: data_lengths[{n}] = {value} is out of range: it must lie in "
                    f"[0, {limit}] (the data's sequence length)")
        if code == BAD_LABEL_LENGTH:
            return (f"CTCLoss: label_lengths[{n}] = {value} is out of range: it must lie in "
                    f"[0, {limit}] (the label's padded length)")
        return f"CTCLoss: invalid input (code {code}) at sample {n}"


def blank_and_padding(attrs, alphabet):
    """(blank channel, padding value) for ``blank_label`` and ``C`` classes."""
    if attrs["blank_label"] == "first":
        return 0, 0
    return alphabet - 1, -1


def _input_names(attrs):
    return (["data", "label"] + (["data_lengths"] if attrs["use_data_lengths"] else [])
            + (["label_lengths"] if attrs["use_label_lengths"] else []))


def _ctc_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    d = known_shape(ins[0], outs[1])
    if d is None:
        return ins, outs
    if len(d) != 3:
        raise shape_error("CTCLoss", f"data must be 3-D (sequence length, batch, alphabet), "
                          f"got {d}", in_shapes)
    t, n, c = d
    if c < 1:
        raise shape_error("CTCLoss", f"data has an alphabet of size {c} (shape {d}): at least "
                          f"the blank class is needed", in_shapes)
    lab = ins[1]
    if lab is not None:
        lab = tuple(lab)
        if len(lab) != 2 or lab[0] != n:
            raise shape_error("CTCLoss", f"label must be 2-D (batch, label length) with batch "
                              f"size {n} to match data {d}, got {lab}", in_shapes)
    names = _input_names(attrs)
    for i in range(2, len(names)):
        if ins[i] is None:
            ins[i] = (n,)
        elif tuple(ins[i]) != (n,):
            raise shape_error("CTCLoss", f"{names[i]} must have shape ({n},) (one length per "
                              f"sample of data {d}), got {tuple(ins[i])}", in_shapes)
    ins[0] = d
    return ins, [(n,), d]


def _ctc_type(attrs, in_types, out_types):
    d = in_types[0] if in_types[0] is not None else next(
        (t for t in out_types if t is not None), None)
    if d is None:
        return in_types, out_types
    ins = [d] + [t if t is not None else d for t in in_types[1:]]
    return ins, [d, d]


def _ctc_gradient(node, out_grads):
    g = backward_node("_backward_CTCLoss", [out_grads[0], node.output(1)], node, {})
    return [g.output(0)] + [None] * (len(node.inputs) - 1)


def ctc_temp(call):
    """Per sample: the log-softmax normaliser of each time step ``(N, T)``,
    the alpha lattice ``(N, T, 2L+1)`` and two rolling beta rows
    ``(N, 2, 2L+1)``, in the data's dtype."""
    t, n, _ = call.in_shapes[0]
    s = 2 * call.in_shapes[1][1] + 1
    dt = np.dtype(call.in_dtypes[0])
    return [((n, t), dt), ((n, t, s), dt), ((n, 2, s), dt)]


def _backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    d = known_shape(ins[1], outs[0])
    if d is None:
        return ins, outs
    if len(d) != 3:
        raise shape_error("_backward_CTCLoss", f"grad must be 3-D, got {d}", in_shapes)
    if ins[0] is not None and tuple(ins[0]) != (d[1],):
        raise shape_error("_backward_CTCLoss", f"out_grad must have shape ({d[1]},) to match "
                          f"grad {d}, got {tuple(ins[0])}", in_shapes)
    return [(d[1],), d], [d]


def _backward_type(attrs, in_types, out_types):
    d = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return ([d, d], [d]) if d is not None else (in_types, out_types)


register(OpDef(
    name="CTCLoss",
    input_names=_input_names,
    num_outputs=2, num_visible_outputs=1, output_names=["out", "grad"],
    attrs=dict(CTC_ATTRS),
    infer_shape=_ctc_shape, infer_type=_ctc_type,
    gradient=_ctc_gradient,
    temp=ctc_temp,
    kernels=kernel_paths("ctc", "prepare_ctc"),
    int_inputs=(1, 2, 3),
    doc="Connectionist temporal classification loss of activations data (T, N, C) against "
        "padded labels (N, L); log-softmax is applied over C inside. Returns the loss per "
        "sample (N,); its gradient is computed in the forward pass."),
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"))

register(OpDef(
    name="_backward_CTCLoss",
    input_names=("out_grad", "grad"),
    infer_shape=_backward_shape, infer_type=_backward_type,
    # each element reads grad[t, n, c] (and out_grad[n]) before writing it
    inplace=lambda attrs: [(1, 0)],
    kernels=kernel_paths("ctc", "prepare_ctc_backward"),
    supports_add=True, hidden=True,
    doc="out_grad[n] * grad[t, n, c]: the CTC gradient scaled by the head gradient."))
