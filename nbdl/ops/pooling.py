"""Pooling: max / avg / sum / lp pooling over 1, 2 or 3 spatial dimensions
(rules only; kernels in nbdl.kernels.*.pooling).

MXNet's ``Pooling``: input ``data`` of shape ``(N, C, *spatial)`` (or
channels-last with ``layout`` NWC/NHWC/NDHWC); attributes ``kernel``,
``pool_type`` (max|avg|sum|lp), ``global_pool``, ``pooling_convention``
(valid|full|same), ``stride`` (default 1s), ``pad`` (default 0s),
``p_value`` (lp; default 2), ``count_include_pad`` (avg; default True),
``cudnn_off`` (ignored) and ``layout``.

Output size per spatial dimension ``x`` (kernel ``k``, stride ``s``, pad ``p``):

- valid: ``floor((x + 2p - k) / s) + 1``
- full:  ``ceil((x + 2p - k) / s) + 1``
- same:  ``ceil(x / s)``; the padding is chosen so the windows cover the
  input (total ``max((out - 1) * s + k - x, 0)``, the smaller half before);
  the ``pad`` attribute is not used.
- global_pool: 1 (the window is the whole spatial extent; kernel, stride and
  pad are ignored).

A window is clipped to ``[-p, x + p)`` and then to the data; an average
divides by the clipped-to-padding size with ``count_include_pad`` and by the
number of data elements otherwise.  lp pooling is ``(sum x**p) ** (1/p)``
(as MXNet, without absolute values).  A window holding no data element
(possible with large pads and the 'full' convention) gives 0.

The gradient is ``_backward_Pooling(out_grad, data, output) -> data_grad``
(MXNet's input order).  Max pooling recomputes the argmax from the data (the
first maximum of each window gets the whole gradient); no mask is stored.
"""
import math
from functools import partial

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import checked_inputs, known_shape, same_type

POOL_TYPES = ("max", "avg", "sum", "lp")
CHANNELS_FIRST = ("NCW", "NCHW", "NCDHW")
CHANNELS_LAST = ("NWC", "NHWC", "NDHWC")

POOLING_ATTRS = {
    "kernel": Attr("tuple", (), doc="Pooling window size (1 to 3 dimensions)."),
    "pool_type": Attr("str", "max", choices=POOL_TYPES, doc="Pooling function."),
    "global_pool": Attr("bool", False, doc="Pool over the whole spatial extent."),
    "cudnn_off": Attr("bool", False, doc="Accepted and ignored."),
    "pooling_convention": Attr("str", "valid", choices=("valid", "full", "same"),
                               doc="How the output size is rounded."),
    "stride": Attr("tuple", (), doc="Window stride (default 1 per dimension)."),
    "pad": Attr("tuple", (), doc="Implicit padding on both sides (default 0)."),
    "p_value": Attr("int", None, optional=True, doc="Power of lp pooling (default 2)."),
    "count_include_pad": Attr("bool", None, optional=True,
                              doc="avg: count padded positions in the divisor (default True)."),
    "layout": Attr("str", None, optional=True, choices=(None,) + CHANNELS_FIRST + CHANNELS_LAST,
                   doc="Data layout (default channels-first)."),
}


def check_pooling_attrs(opname, attrs):
    k, s, p = attrs["kernel"], attrs["stride"], attrs["pad"]
    if not attrs["global_pool"]:
        if not 1 <= len(k) <= 3:
            raise AttrError(f"{opname}: kernel={k!r} is invalid: expected 1 to 3 window sizes "
                            f"(or global_pool=True)")
    same = attrs["pooling_convention"] == "same"
    if same and any(p):
        raise AttrError(f"{opname}: pad={p!r} is invalid: the 'same' pooling convention "
                        f"chooses the padding itself (pad must be 0)")
    for name, v, lo in (("kernel", k, 1), ("stride", s, 1), ("pad", p, 0)):
        if any(not isinstance(e, int) or e < lo for e in v):
            raise AttrError(f"{opname}: {name}={v!r} is invalid: expected integers >= {lo}")
        if name == "pad" and same:
            continue        # any number of zeros, as MXNet's (pad=(0, 0, 0) with a 1-D kernel)
        if name != "kernel" and v and k and len(v) != len(k):
            raise AttrError(f"{opname}: {name}={v!r} has {len(v)} dimension(s) but "
                            f"kernel={k!r} has {len(k)}")
    pv = attrs.get("p_value")
    if pv is not None and pv < 1:
        raise AttrError(f"{opname}: p_value={pv!r} is invalid: expected an integer >= 1")


_inputs = partial(checked_inputs, check_pooling_attrs)   # input names, the attributes checked first


def channels_last(attrs):
    return attrs.get("layout") in CHANNELS_LAST


def geometry(opname, attrs, shape, in_shapes):
    """Per spatial dimension: (in size, kernel, stride, pad before, out size),
    validated against the data shape."""
    shape = tuple(int(d) for d in shape)
    nd = len(shape)
    layout = attrs.get("layout")
    if attrs["global_pool"]:
        ns = nd - 2
        if not 1 <= ns <= 3:
            raise shape_error(opname, f"data must have 3 to 5 dimensions, got {nd} {shape}",
                              in_shapes)
    else:
        ns = len(attrs["kernel"])
        if nd != ns + 2:
            raise shape_error(opname, f"kernel={attrs['kernel']} needs data with {ns + 2} "
                              f"dimensions, got {nd} {shape}", in_shapes)
    if layout is not None and len(layout) != nd:
        raise shape_error(opname, f"layout={layout} does not match data of {nd} "
                          f"dimension(s) {shape}", in_shapes)
    spatial = shape[1:-1] if channels_last(attrs) else shape[2:]
    dims = []
    for i, x in enumerate(spatial):
        if attrs["global_pool"]:
            dims.append((x, max(x, 1), 1, 0, 1))
            continue
        k = attrs["kernel"][i]
        s = attrs["stride"][i] if attrs["stride"] else 1
        p = attrs["pad"][i] if attrs["pad"] else 0
        conv = attrs["pooling_convention"]
        if conv == "same":
            o = -(-x // s)
            total = max((o - 1) * s + k - x, 0)
            dims.append((x, k, s, total // 2, o))
            continue
        if x + 2 * p < k:
            raise shape_error(opname, f"kernel={attrs['kernel']} is larger than the padded "
                              f"data {shape} (pad={attrs['pad'] or (0,) * ns})", in_shapes)
        if conv == "valid":
            o = (x + 2 * p - k) // s + 1
        else:
            o = -(-(x + 2 * p - k) // s) + 1
        dims.append((x, k, s, p, o))
    return dims


def out_shape(opname, attrs, shape, in_shapes):
    dims = geometry(opname, attrs, shape, in_shapes)
    shape = tuple(int(d) for d in shape)
    osp = tuple(d[4] for d in dims)
    if channels_last(attrs):
        return (shape[0],) + osp + (shape[-1],)
    return shape[:2] + osp


def _forward_shape(opname):
    def rule(attrs, in_shapes, out_shapes):
        d = in_shapes[0]
        if d is None:
            return in_shapes, out_shapes
        o = out_shape(opname, attrs, d, in_shapes)
        if out_shapes[0] is not None and tuple(out_shapes[0]) != o:
            raise shape_error(opname, f"output has shape {tuple(out_shapes[0])}, expected {o}",
                              in_shapes)
        return [tuple(d)], [o]
    return rule



def _gradient(node, out_grads):
    back = backward_node(f"_backward_{node.op.name}",
                         [out_grads[0], node.inputs[0], node.output(0)], node)
    return [back.output(0)]


def _backward_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_Pooling"
    d = known_shape(in_shapes[1], out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    o = out_shape(opname, attrs, d, in_shapes)
    for name, s, want in (("out_grad", in_shapes[0], o), ("output", in_shapes[2], o),
                          ("data_grad", out_shapes[0], d)):
        if s is not None and tuple(s) != want:
            raise shape_error(opname, f"argument {name!r} has shape {tuple(s)}, expected {want}",
                              in_shapes)
    return [o, d, o], [d]


def _backward_shape_inputs(attrs):
    t = attrs["pool_type"]
    if t == "lp":
        return ()
    if t == "max":
        return (2,)
    return (1, 2)


def _register(name, attrs, doc, backward_doc):
    """``name`` and its hidden ``_backward_<name>``, on the pooling kernels."""
    register(OpDef(
        name=name,
        input_names=_inputs(name, ["data"]),
        attrs=dict(attrs),
        infer_shape=_forward_shape(name), infer_type=same_type,
        gradient=_gradient,
        flops=lambda a, ins, outs: (math.prod(ins[0]) if a["global_pool"]
                                    else math.prod(outs[0]) * math.prod(a["kernel"] or (1,))),
        half_mirrors=True,
        kernels=kernel_paths("pooling", "prepare_pooling"),
        temp=kernel_paths("pooling", "temp_pooling"),
        supports_add=True, doc=doc))
    register(OpDef(
        name=f"_backward_{name}",
        input_names=_inputs(f"_backward_{name}", ["out_grad", "data", "output"]),
        attrs=dict(attrs),
        infer_shape=_backward_shape, infer_type=same_type,
        shape_inputs=_backward_shape_inputs,
        half_mirrors=True,
        kernels=kernel_paths("pooling", "prepare_pooling_backward"),
        supports_add=True, hidden=True, doc=backward_doc))


_register("Pooling", POOLING_ATTRS,
          "Max, average, sum or lp pooling over 1-3 spatial dimensions.",
          "Pooling's data gradient (max: routed to each window's first maximum).")


# -- Pooling_v1: MXNet's legacy operator, on the same kernels ----------------------------------

POOLING_V1_ATTRS = {
    "kernel": POOLING_ATTRS["kernel"],
    "pool_type": Attr("str", "max", choices=("max", "avg", "sum"), doc="Pooling function."),
    "global_pool": POOLING_ATTRS["global_pool"],
    "pooling_convention": Attr("str", "valid", choices=("valid", "full"),
                               doc="How the output size is rounded."),
    "stride": POOLING_ATTRS["stride"],
    "pad": POOLING_ATTRS["pad"],
}

_register("Pooling_v1", POOLING_V1_ATTRS,
          "MXNet's legacy Pooling: the data is zero-padded to cover every window, so a "
          "window leaving the data takes a 0 into its max and avg divides by the whole kernel.",
          "Pooling_v1's data gradient.")
