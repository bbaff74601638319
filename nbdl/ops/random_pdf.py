"""Probability density ops: rules only (kernels in nbdl.kernels.{cpu,cuda}.random_pdf,
math in nbdl.kernels.shared.random_pdf).

``_random_pdf_<dist>(sample, <params>, is_log=False)`` as MXNet 1.9.1: the
parameter arrays share one shape, which is the leading part of ``sample``'s
(``sample.shape[:param.ndim]``); the output has ``sample``'s shape and holds
the pdf (or its log) of each sample under its parameters.  Dirichlet's
``alpha`` has a last axis of ``k`` that matches ``sample``'s last axis and
the output drops it.  Gradients flow to the sample and to every parameter
(``_backward_pdf_<dist>``, the parameters' summed over their samples).
The forward takes float16 on the CPU; the gradients are float32/float64.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, register, shape_error

PDF_PARAMS = {
    "uniform": ("low", "high"), "normal": ("mu", "sigma"), "gamma": ("alpha", "beta"),
    "exponential": ("lam",), "poisson": ("lam",), "negative_binomial": ("k", "p"),
    "generalized_negative_binomial": ("mu", "alpha"), "dirichlet": ("alpha",),
}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_HALF_FLOATS = (np.dtype(np.float16),) + _FLOATS


def _kernels(name):
    return {"cpu": f"nbdl.kernels.cpu.random_pdf:{name}",
            "cuda": f"nbdl.kernels.cuda.random_pdf:{name}"}


def _pdf_shape(opname, vector):
    def rule(attrs, in_shapes, out_shapes):
        sample = in_shapes[0]
        params = [s for s in in_shapes[1:] if s is not None]
        if sample is None or not params:
            return in_shapes, out_shapes
        sample = tuple(sample)
        p = tuple(params[0])
        for q in params[1:]:
            if tuple(q) != p:
                raise shape_error(opname, "the parameter arrays' shapes differ", in_shapes)
        if len(p) > len(sample) or (vector and not p):
            raise shape_error(opname, f"the parameters' dimension ({len(p)}) exceeds the "
                              f"samples' ({len(sample)})", in_shapes)
        want = sample[:len(p)]
        if vector:
            want = sample[:len(p) - 1] + (sample[-1],)
        if p != want:
            raise shape_error(opname, f"parameter shape {p} must be the samples' leading "
                              f"dimensions {want}", in_shapes)
        if vector:
            out = sample[:-1] if len(sample) > 1 else (1,)
        else:
            out = sample
        return [sample] + [p] * (len(in_shapes) - 1), [out]
    return rule


def _pdf_type(opname):
    def rule(attrs, in_types, out_types):
        t = next((x for x in list(in_types) + list(out_types) if x is not None), None)
        if t is None:
            return in_types, out_types
        t = np.dtype(t)
        for x in list(in_types) + list(out_types):
            if x is not None and np.dtype(x) != t:
                raise DTypeError(f"{opname}: inputs must share one dtype, got "
                                 f"{', '.join(str(np.dtype(y)) for y in in_types if y)}")
        return [t] * len(in_types), [t]
    return rule


def _pdf_grad(backward):
    def rule(node, out_grads):
        g = backward_node(backward, [out_grads[0]] + list(node.inputs) + [node.output(0)], node)
        return [g.output(i) for i in range(len(node.inputs))]
    return rule


def _bw_shape(n_in):
    def rule(attrs, in_shapes, out_shapes):
        # inputs: out_grad, sample, params..., pdf; outputs: sample's and params' grads
        ins = list(in_shapes)
        outs = list(out_shapes)
        for i in range(n_in):
            if ins[1 + i] is None and outs[i] is not None:
                ins[1 + i] = outs[i]
            outs[i] = ins[1 + i]
        if ins[0] is None:
            ins[0] = ins[-1]
        return ins, outs
    return rule


def _bw_type(attrs, in_types, out_types):
    t = next((x for x in list(in_types) + list(out_types) if x is not None), None)
    return [t] * len(in_types), [t] * len(out_types)


def param_temp(call):
    """A one-parameter pdf's backward writes a second parameter gradient into
    this scratch (the kernel is shared with the two-parameter ops)."""
    if call.op.name == "_backward_pdf_dirichlet" or len(call.in_shapes) != 4:
        return []
    return [(tuple(call.in_shapes[2]), np.dtype(call.in_dtypes[2]))]


for _dist, _params in PDF_PARAMS.items():
    _name = f"_random_pdf_{_dist}"
    _bw = f"_backward_pdf_{_dist}"
    _vector = _dist == "dirichlet"
    register(OpDef(
        name=_name, input_names=("sample",) + _params,
        attrs={"is_log": Attr("bool", False, doc="Return the log-density instead.")},
        infer_shape=_pdf_shape(_name, _vector), infer_type=_pdf_type(_name),
        gradient=_pdf_grad(_bw), kernels=_kernels("prepare_pdf"), dtypes=_HALF_FLOATS,
        doc=f"The {_dist.replace('_', ' ')} pdf (or log-pdf with is_log) of ``sample`` "
            f"under the parameters {', '.join(_params)} (arrays of ``sample``'s leading "
            f"shape)."), aliases=(f"random_pdf_{_dist}",))
    register(OpDef(
        name=_bw, input_names=("out_grad", "sample") + _params + ("pdf",),
        num_outputs=1 + len(_params),
        attrs={"is_log": Attr("bool", False)},
        infer_shape=_bw_shape(1 + len(_params)), infer_type=_bw_type,
        temp=param_temp, kernels=_kernels("prepare_pdf_backward"), dtypes=_FLOATS,
        hidden=True, doc=f"The gradients of {_name} wrt its sample and parameters."))
