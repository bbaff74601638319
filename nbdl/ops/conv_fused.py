"""``_nbdl_fused_conv``: a Convolution with what follows it in an inference
graph done in its output loop (rules only; kernels are Convolution's forward
in ``nbdl.kernels.*.convolution``, the output loop in
``kernels/shared/conv_epilogue.py``).  ``nbdl.graph.fuse`` makes these nodes
when it rewrites a graph bound for inference only, as MXNet 1.9.1's MKLDNN
backend makes ``_sg_mkldnn_conv``; users do not write them.

Attributes: Convolution's, plus ``with_bn`` (a BatchNorm with its moving
statistics follows: ``bn_eps``, ``bn_fix_gamma`` are its ``eps`` and
``fix_gamma``), ``with_sum`` (then a residual input is added) and
``act_type`` (then ``relu``: ``Activation(act_type='relu')``, NaN to 0, or
``relu_nan``: the ``relu`` op, NaN kept).

Inputs: ``data``, ``weight``, ``bias`` (unless ``no_bias``), ``sum`` (with
``with_sum``: an array of the output's shape), ``gamma``, ``beta`` and the
aux ``moving_mean``, ``moving_var`` (with ``with_bn``: shape ``(num_filter,)``).
The output is ``act(bn(conv(data) + bias) + sum)``.  Inference only: no
gradient, no training variant (the BatchNorm always uses its moving
statistics and never updates them).
"""
import math

from .attrs import Attr
from .convolution import CONV_ATTRS
from .registry import OpDef, get_op, kernel_paths, register, shape_error
from .rules import same_type

FUSED_ATTRS = dict(
    CONV_ATTRS,
    with_bn=Attr("bool", False, doc="A BatchNorm (moving statistics) follows the convolution."),
    bn_eps=Attr("float", 1e-3, doc="The BatchNorm's eps."),
    bn_fix_gamma=Attr("bool", True, doc="The BatchNorm's fix_gamma (gamma taken as 1)."),
    with_sum=Attr("bool", False, doc="A residual input ``sum`` is added."),
    act_type=Attr("str", None, optional=True, choices=("relu", "relu_nan"),
                  doc="Then ReLU: 'relu' as Activation (NaN -> 0), 'relu_nan' as the relu op."))


def fused_inputs(attrs):
    """The argument inputs of a fused convolution with ``attrs``, in order."""
    return (["data", "weight"] + ([] if attrs["no_bias"] else ["bias"])
            + (["sum"] if attrs["with_sum"] else []) + (["gamma", "beta"] if attrs["with_bn"] else []))


def _aux(attrs):
    return ["moving_mean", "moving_var"] if attrs["with_bn"] else []


def _shape(attrs, in_shapes, out_shapes):
    names = fused_inputs(attrs) + _aux(attrs)
    at = {n: i for i, n in enumerate(names)}
    ins = list(in_shapes)
    conv_in = [ins[at["data"]], ins[at["weight"]]] + ([] if attrs["no_bias"] else [ins[at["bias"]]])
    conv_in, outs = get_op("Convolution").infer_shape(attrs, conv_in, list(out_shapes))
    ins[at["data"]], ins[at["weight"]] = conv_in[0], conv_in[1]
    if not attrs["no_bias"]:
        ins[at["bias"]] = conv_in[2]
    want = {"sum": outs[0]}
    for n in ("gamma", "beta", "moving_mean", "moving_var"):
        want[n] = (attrs["num_filter"],)
    for n, s in want.items():
        if n not in at or s is None:
            continue
        got = ins[at[n]]
        if got is not None and tuple(got) != tuple(s):
            raise shape_error("_nbdl_fused_conv", f"argument {n!r} has shape {tuple(got)}, "
                              f"expected {tuple(s)}", in_shapes)
        ins[at[n]] = tuple(s)
    return ins, outs


register(OpDef(
    name="_nbdl_fused_conv", input_names=fused_inputs, aux_names=_aux,
    attrs=FUSED_ATTRS, infer_shape=_shape, infer_type=same_type,
    temp={"cpu": "nbdl.kernels.cpu.conv_plan:temp_convolution",
          "cuda": "nbdl.kernels.cuda.convolution:temp_convolution"},
    flops=lambda a, ins, outs: 2 * math.prod(outs[0]) * math.prod(ins[1][1:]),
    kernels=kernel_paths("convolution", "prepare_fused_convolution"),
    hidden=True,
    doc="Convolution, then an inference BatchNorm, a residual add and ReLU in its output "
        "loop (made by nbdl.graph.fuse for graphs bound for inference)."))
