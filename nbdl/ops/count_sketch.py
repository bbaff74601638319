"""_contrib_count_sketch (rules only; kernels in
``nbdl.kernels.*.count_sketch``), with MXNet 1.9.1's name, inputs (``data``,
``h``, ``s``) and attributes (``processing_batch_size`` is accepted: it only
batched MXNet's CUDA launches).

``out[n, h[i]] += s[i] * data[n, i]``: data (N, d) or (N1, N2, N3, d) (rows
along the last axis), the index hash ``h`` and sign hash ``s`` (1, d) (``h``
holds indices in [0, out_dim) as floats, ``s`` +-1), output (..., out_dim).
Data's gradient (``_backward_contrib_count_sketch``) is ``g[n, h[i]] *
s[i]``; ``h`` and ``s`` get none, as in MXNet.  An index outside
[0, out_dim) is skipped (MXNet writes out of bounds).  MXNet 1.9.1 runs it
on GPUs only; nbdl on both devices.  float32 and float64.
"""
from .attrs import Attr
from .elemwise_unary import equal_types
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error

SKETCH_ATTRS = {
    "out_dim": Attr("int", doc="The output dimension."),
    "processing_batch_size": Attr("int", 32, doc="Accepted (MXNet's CUDA batching)."),
}


def _shape(attrs, in_shapes, out_shapes):
    d, h, s = in_shapes
    if d is None:
        return in_shapes, out_shapes
    d = tuple(d)
    if len(d) not in (2, 4):
        raise shape_error("_contrib_count_sketch", f"data must be 2-D or 4-D, got {d}", in_shapes)
    if attrs["out_dim"] < 1:
        raise shape_error("_contrib_count_sketch", f"out_dim={attrs['out_dim']} must be positive",
                          in_shapes)
    hs = (1, d[-1])
    for name, v in (("h", h), ("s", s)):
        if v is not None and tuple(v) != hs:
            raise shape_error("_contrib_count_sketch", f"{name} must be {hs} (one entry per "
                              f"input column), got {tuple(v)}", in_shapes)
    return [d, hs, hs], [d[:-1] + (attrs["out_dim"],)]


def _grad(node, out_grads):
    g = backward_node("_backward_contrib_count_sketch",
                      [out_grads[0], node.inputs[0], node.inputs[1], node.inputs[2]], node)
    return [g.output(0), None, None]


register(OpDef(
    name="_contrib_count_sketch", input_names=("data", "h", "s"), attrs=dict(SKETCH_ATTRS),
    infer_shape=_shape, infer_type=equal_types("_contrib_count_sketch", ("data", "h", "s")),
    gradient=_grad,
    kernels=kernel_paths("count_sketch", "prepare_count_sketch"),
    supports_add=True, doc="Count sketch of each row: out[h[i]] += s[i] * data[i]."))

register(OpDef(
    name="_backward_contrib_count_sketch", input_names=("out_grad", "data", "h", "s"),
    attrs=dict(SKETCH_ATTRS),
    infer_shape=lambda attrs, ins, outs: (ins, [ins[1] if ins[1] is not None else outs[0]]),
    infer_type=equal_types("_backward_contrib_count_sketch", ("out_grad", "data", "h", "s")),
    shape_inputs=(1,),
    kernels=kernel_paths("count_sketch", "prepare_count_sketch_backward"),
    supports_add=True, hidden=True, doc="_contrib_count_sketch's data gradient."))
