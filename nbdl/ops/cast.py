"""Cast: convert an array to another dtype (MXNet's ``Cast``; AMP's
``amp_cast`` and ``amp_multicast``).  float16 is a real dtype here: the CPU
kernels convert its bits (``kernels/cpu/_half.py``), CUDA through float32."""
import numpy as np

from .attrs import Attr
from .elemwise_unary import same_shape
from .ir import backward_node, make_node
from .registry import OpDef, kernel_paths, register

CAST_DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool")
ALL_DTYPES = tuple(np.dtype(d) for d in CAST_DTYPES)
_AMP_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))


def _cast_type(attrs, in_types, out_types):
    return [in_types[0]], [np.dtype(attrs["dtype"])]


def _cast_grad(node, out_grads):
    # The gradient goes back in the input's dtype; shapes and dtypes are not
    # known while the gradient graph is built, so cast "like" the input.
    return [backward_node("_cast_like", [out_grads[0], node.inputs[0]], node, {}).output(0)]


register(OpDef(
    name="Cast",
    attrs={"dtype": Attr("str", choices=CAST_DTYPES)},
    infer_shape=same_shape, infer_type=_cast_type, gradient=_cast_grad,
    kernels=kernel_paths("cast", "prepare_cast"),
    supports_add=True, dtypes=ALL_DTYPES,
    doc="Convert ``data`` to ``dtype`` (values are converted as numpy's "
        "``astype`` does, floats to integers by truncation)."), aliases=("cast",))


def _amp_cast_type(attrs, in_types, out_types):
    # AMP casts between float32 and float16 only; other dtypes pass unchanged
    t = in_types[0]
    if t is None:
        return [None], [out_types[0]]
    return [t], [np.dtype(attrs["dtype"]) if np.dtype(t) in _AMP_FLOATS else t]


register(OpDef(
    name="amp_cast",
    attrs={"dtype": Attr("str", choices=CAST_DTYPES)},
    infer_shape=same_shape, infer_type=_amp_cast_type, gradient=_cast_grad,
    kernels=kernel_paths("cast", "prepare_cast"),
    supports_add=True, dtypes=ALL_DTYPES,
    doc="AMP's cast: ``data`` converted to ``dtype`` when it is float32 or "
        "float16, any other dtype passed on unchanged."))


def _multicast_inputs(attrs):
    return [f"data_{i}" for i in range(attrs["num_outputs"])]


def _multicast_shape(attrs, in_shapes, out_shapes):
    shapes = [i if i is not None else o for i, o in zip(in_shapes, out_shapes)]
    return shapes, list(shapes)


def _multicast_type(attrs, in_types, out_types):
    # the widest (cast_narrow: narrowest) float type among the float inputs
    known = [np.dtype(t) for t in list(in_types) + list(out_types) if t is not None]
    narrow = attrs["cast_narrow"]
    half, single = _AMP_FLOATS[1], _AMP_FLOATS[0]
    if narrow:
        target = half if half in known else single
    else:
        target = single if single in known else (np.dtype(in_types[0])
                                                 if in_types[0] is not None else None)
    outs = []
    for t, o in zip(in_types, out_types):
        if t is None:
            outs.append(o)
        elif np.dtype(t) in _AMP_FLOATS:
            outs.append(target)
        else:
            outs.append(np.dtype(t))
    return list(in_types), outs


def _multicast_grad(node, out_grads):
    return [make_node("_cast_like", [g, x], name=f"{node.name}_backward{i}").output(0)
            if g is not None else None
            for i, (g, x) in enumerate(zip(out_grads, node.inputs))]


register(OpDef(
    name="amp_multicast", input_names=_multicast_inputs, key_var_num_args="num_outputs",
    num_outputs=lambda attrs: attrs["num_outputs"],
    attrs={"num_outputs": Attr("int"), "cast_narrow": Attr("bool", default=False)},
    infer_shape=_multicast_shape, infer_type=_multicast_type, gradient=_multicast_grad,
    kernels=kernel_paths("cast", "prepare_multicast"),
    supports_add=True, dtypes=ALL_DTYPES,
    doc="AMP's cast of ``num_outputs`` inputs to their widest float type "
        "(float32 when any input is float32; ``cast_narrow=True``: the "
        "narrowest, float16 when any is); non-float inputs pass unchanged."))


def _cast_like_shape(attrs, in_shapes, out_shapes):
    s = in_shapes[0] or in_shapes[1] or out_shapes[0]
    return [s, s], [s]


def _cast_like_type(attrs, in_types, out_types):
    return [in_types[0], in_types[1]], [in_types[1]]


register(OpDef(
    name="_cast_like", input_names=("data", "like"), hidden=True, shape_inputs=(1,),
    infer_shape=_cast_like_shape, infer_type=_cast_like_type,
    gradient=lambda node, g: [backward_node("_cast_like", [g[0], node.inputs[0]], node,
                                            {}).output(0), None],
    kernels=kernel_paths("cast", "prepare_cast_like"),
    supports_add=True, dtypes=ALL_DTYPES,
    doc="``data`` converted to the dtype of ``like`` (Cast's gradient)."))
