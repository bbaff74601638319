"""Unary elementwise ops: rules only (kernels in nbdl.kernels.*.elemwise_unary)."""
from .registry import OpDef, register


def same_shape(attrs, in_shapes, out_shapes):
    """Elementwise shape rule: every input and output has one shape."""
    known = next((s for s in list(in_shapes) + list(out_shapes) if s is not None), None)
    return [known] * len(in_shapes), [known] * len(out_shapes)


def same_type(attrs, in_types, out_types):
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


def _copy_grad(node, out_grads):
    return [out_grads[0]]


register(OpDef(
    name="_copy",
    infer_shape=same_shape, infer_type=same_type,
    gradient=_copy_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels={"cpu": "nbdl.kernels.cpu.elemwise_unary:prepare_copy",
             "cuda": "nbdl.kernels.cuda.elemwise_unary:prepare_copy"},
    supports_add=True,
    doc="Copy the input (``identity``)."), aliases=("identity",))
