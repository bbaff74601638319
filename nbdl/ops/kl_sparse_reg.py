"""IdentityAttachKLSparseReg (rules only; kernels in
``nbdl.kernels.*.kl_sparse_reg``).

The identity forward on data (N, C, ...) (meant to follow a sigmoid); aux
``moving_avg`` (C,), initialised to zero.  In the backward pass, as MXNet's,
the mean activation ``avg[c]`` over the batch (and any trailing axes) first
updates ``moving_avg = momentum * moving_avg + (1 - momentum) * avg``, then
the gradient is ``out_grad + penalty * (-sparseness_target / moving_avg +
(1 - sparseness_target) / (1 - moving_avg))``: the hidden
``_backward_IdentityAttachKLSparseReg(out_grad, data; aux moving_avg)``
writes the aux state (``mutates_aux``)."""
from ..errors import AttrError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import same_type

KL_ATTRS = {
    "sparseness_target": Attr("float", 0.1, doc="The target mean activation, in [0, 1]."),
    "penalty": Attr("float", 0.001, doc="Weight of the sparseness penalty."),
    "momentum": Attr("float", 0.9, doc="Momentum of the running mean activation, in [0, 1]."),
}


def _inputs(attrs):
    for k in ("sparseness_target", "momentum"):
        if not 0.0 <= attrs[k] <= 1.0:
            raise AttrError(f"IdentityAttachKLSparseReg: {k}={attrs[k]} must be in [0, 1]")
    return ["data"]


def _shape(opname, n_lead):
    def infer_shape(attrs, in_shapes, out_shapes):
        d = next((s for s in list(in_shapes[:n_lead]) + list(out_shapes) if s is not None), None)
        if d is None:
            return in_shapes, out_shapes
        d = tuple(d)
        if len(d) < 2:
            raise shape_error(opname, f"data must have at least 2 dimensions (N, C, ...), "
                              f"got {d}", in_shapes)
        ma = in_shapes[-1]
        if ma is not None and tuple(ma) != (d[1],):
            raise shape_error(opname, f"moving_avg has shape {tuple(ma)}, expected {(d[1],)}",
                              in_shapes)
        return [d] * n_lead + [(d[1],)], [d]
    return infer_shape



def _grad(node, out_grads):
    g = backward_node("_backward_IdentityAttachKLSparseReg",
                      [out_grads[0], node.inputs[0], node.inputs[1]], node)
    return [g.output(0), None]


register(OpDef(
    name="IdentityAttachKLSparseReg", input_names=_inputs, aux_names=("moving_avg",),
    attrs=dict(KL_ATTRS), infer_shape=_shape("IdentityAttachKLSparseReg", 1),
    infer_type=same_type, gradient=_grad, inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("kl_sparse_reg", "prepare_forward"),
    supports_add=True, input_var_init={"moving_avg": '["zero", {}]'},
    doc="Identity forward; backward adds a KL sparseness penalty against a running mean "
        "activation (aux moving_avg, updated in the backward pass)."))

register(OpDef(
    name="_backward_IdentityAttachKLSparseReg", input_names=("out_grad", "data"),
    aux_names=("moving_avg",), attrs=dict(KL_ATTRS),
    infer_shape=_shape("_backward_IdentityAttachKLSparseReg", 2), infer_type=same_type,
    # each column reads its head gradient element before writing it
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("kl_sparse_reg", "prepare_backward"),
    supports_add=True, mutates_aux=True, hidden=True,
    doc="IdentityAttachKLSparseReg's gradient; updates moving_avg."))
