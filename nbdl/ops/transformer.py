"""The interleaved multi-head attention products of MXNet 1.9.1's
``contrib/transformer.cc`` (rules only; kernels in ``nbdl.kernels.*.transformer``).

BERT and GluonNLP checkpoints name these ops.  Their operands keep every
head's projections interleaved on the last axis, as the fused input
projection writes them:

- ``queries_keys_values`` (S, B, heads * 3 * D): per head ``[q | k | v]``;
- ``keys_values`` (S, B, heads * 2 * D): per head ``[k | v]``;
- ``queries`` (S, B, heads * D), and the valatt outputs (S, B, heads * D);
- attention maps (B * heads, S_q, S_k), batch item ``b * heads + h``.

``_contrib_interleaved_matmul_selfatt_qk(qkv)`` is ``q.k^T / sqrt(D)`` per
(batch, head); ``_selfatt_valatt(qkv, attention)`` is ``attention . v``
written back interleaved; ``_encdec_qk(queries, keys_values)`` and
``_encdec_valatt(keys_values, attention)`` the same across two sequences.
Each has a hidden ``_backward_interleaved_matmul_<x>`` op (MXNet's names);
a projection an op does not read gets a zero gradient.
"""
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, register, shape_error
from .rules import same_type

_ATTRS = {"heads": Attr("int", doc="Set number of heads.")}
_CPU = "nbdl.kernels.cpu.transformer:"
_CUDA = "nbdl.kernels.cuda.transformer:"

# op -> its input names; the backward ops take out_grad first, then these
_FORWARD = {
    "selfatt_qk": ("queries_keys_values",),
    "selfatt_valatt": ("queries_keys_values", "attention"),
    "encdec_qk": ("queries", "keys_values"),
    "encdec_valatt": ("keys_values", "attention"),
}


def _three_d(where, name, shape, in_shapes):
    if len(shape) != 3:
        raise shape_error(where, f"input {name!r} must be 3-D (seq_length, batch, projections), "
                          f"got {tuple(shape)}", in_shapes)


def head_dim(where, name, shape, parts, heads, in_shapes):
    """D of an interleaved operand whose last axis holds ``parts``
    projections of ``heads`` heads each."""
    _three_d(where, name, shape, in_shapes)
    if heads < 1:
        raise shape_error(where, f"heads must be >= 1, got {heads}", in_shapes)
    if shape[2] % (parts * heads):
        raise shape_error(where, f"the last axis of {name!r} ({shape[2]}) is not {parts} "
                          f"projection(s) of {heads} heads", in_shapes)
    return shape[2] // (parts * heads)


def _att_check(where, att, want, in_shapes):
    if tuple(att) != tuple(want):
        raise shape_error(where, f"input 'attention' has shape {tuple(att)}, expected "
                          f"{tuple(want)} (batch * heads, query length, key length)", in_shapes)


def forward_shape(kind, attrs, ins, where):
    """The output shape of ``_contrib_interleaved_matmul_<kind>`` for the
    known input shapes ``ins`` (raises ``ShapeError`` when they disagree)."""
    h = attrs["heads"]
    for name, shape in zip(_FORWARD[kind], ins):
        _three_d(where, name, shape, ins)
    if kind == "selfatt_qk":
        s, b, _ = ins[0]
        head_dim(where, "queries_keys_values", ins[0], 3, h, ins)
        return (b * h, s, s)
    if kind == "selfatt_valatt":
        s, b, _ = ins[0]
        d = head_dim(where, "queries_keys_values", ins[0], 3, h, ins)
        _att_check(where, ins[1], (b * h, s, s), ins)
        return (s, b, h * d)
    if kind == "encdec_qk":
        d = head_dim(where, "queries", ins[0], 1, h, ins)
        dk = head_dim(where, "keys_values", ins[1], 2, h, ins)
        if d != dk or ins[0][1] != ins[1][1]:
            raise shape_error(where, f"keys_values {tuple(ins[1])} must be (seq_length, "
                              f"{ins[0][1]}, {2 * ins[0][2]}) for queries {tuple(ins[0])}", ins)
        return (ins[0][1] * h, ins[0][0], ins[1][0])
    sk, b, _ = ins[0]
    d = head_dim(where, "keys_values", ins[0], 2, h, ins)
    _att_check(where, ins[1], (b * h, ins[1][1], sk), ins)
    return (ins[1][1], b, h * d)


def _forward_rule(kind):
    name = "_contrib_interleaved_matmul_" + kind

    def rule(attrs, in_shapes, out_shapes):
        if any(s is None for s in in_shapes):
            return list(in_shapes), list(out_shapes)
        out = forward_shape(kind, attrs, [tuple(s) for s in in_shapes], name)
        if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
            raise shape_error(name, f"output has shape {tuple(out_shapes[0])}, expected {out}",
                              in_shapes)
        return list(in_shapes), [out]
    return rule


def _backward_rule(kind):
    name = "_backward_interleaved_matmul_" + kind
    forward = _forward_rule(kind)

    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        for k in range(len(outs)):          # each gradient has its input's shape
            if ins[k + 1] is None:
                ins[k + 1] = outs[k]
            if ins[k + 1] is not None:
                outs[k] = tuple(ins[k + 1])
        if all(s is not None for s in ins[1:]):
            want = forward(attrs, ins[1:], [None])[1][0]
            if ins[0] is not None and tuple(ins[0]) != want:
                raise shape_error(name, f"out_grad has shape {tuple(ins[0])}, expected {want}",
                                  in_shapes)
            ins[0] = want
        return ins, outs
    return rule


def _gradient(kind):
    def gradient(node, out_grads):
        back = backward_node("_backward_interleaved_matmul_" + kind,
                             [out_grads[0]] + list(node.inputs), node,
                             {"heads": node.attrs["heads"]})
        return [back.output(i) for i in range(back.num_outputs)]
    return gradient


def _temps(which):
    return {"cpu": f"{_CPU}temp_{which}", "cuda": f"{_CUDA}temp_{which}"}


for _kind, _inputs in _FORWARD.items():
    register(OpDef(
        name="_contrib_interleaved_matmul_" + _kind, input_names=_inputs, attrs=dict(_ATTRS),
        infer_shape=_forward_rule(_kind), infer_type=same_type, gradient=_gradient(_kind),
        temp=_temps(_kind), supports_add=True, half_mirrors=True,
        kernels={"cpu": f"{_CPU}prepare_{_kind}", "cuda": f"{_CUDA}prepare_{_kind}"},
        doc=f"Multi-head attention product on interleaved projections ({', '.join(_inputs)}); "
            f"see the module docstring of nbdl.ops.transformer."))
    register(OpDef(
        name="_backward_interleaved_matmul_" + _kind, input_names=("out_grad",) + _inputs,
        num_outputs=len(_inputs), output_names=tuple(f"{n}_grad" for n in _inputs),
        attrs=dict(_ATTRS), infer_shape=_backward_rule(_kind), infer_type=same_type,
        temp=_temps(_kind + "_backward"), supports_add=True, hidden=True, half_mirrors=True,
        kernels={"cpu": f"{_CPU}prepare_{_kind}_backward",
                 "cuda": f"{_CUDA}prepare_{_kind}_backward"},
        doc="Gradients of the interleaved attention product (MXNet's hidden backward op)."))

__all__ = ["forward_shape", "head_dim"]
