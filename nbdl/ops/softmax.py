"""softmax and log_softmax: rules only (kernels in nbdl.kernels.*.softmax).

The gradients use the forward *output* only (``_backward_softmax(out_grad,
out)``), so the input can die after the forward step or be overwritten by it
(inplace).  ``use_length=True`` (MXNet's masked softmax) adds an integer
``length`` input, the data's shape without ``axis``: each row uses its first
``length`` entries, the others are 0 (outputs and gradients, log_softmax
too, as MXNet's); the length gets no gradient.  ``dtype`` is the output's
dtype, as in MXNet (the data's by default): the kernels compute in the
output's dtype and the gradient is cast back to the data's
(``_cast_like``); float16 arrays run the float32 kernels
(``OpDef.half_mirrors``)."""
import math

import numpy as np

from ..errors import AttrError, DTypeError
from .ir import backward_node, make_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error

SOFTMAX_ATTRS = {
    "axis": Attr("int", -1, doc="The axis along which to compute softmax."),
    "temperature": Attr("float", None, optional=True, doc="Divides the input by this first."),
    "dtype": Attr("str", None, optional=True, choices=("float16", "float32", "float64"),
                  doc="Output dtype (default: the data's)."),
    "use_length": Attr("bool", False, optional=True,
                       doc="Mask each row to its first ``length`` entries (a second input, "
                           "the data's shape without ``axis``); the rest give 0."),
}
# The hidden backward ops take the attributes that change the arithmetic.
BACKWARD_ATTRS = {"axis": SOFTMAX_ATTRS["axis"], "temperature": SOFTMAX_ATTRS["temperature"],
                  "use_length": SOFTMAX_ATTRS["use_length"]}


def use_length(attrs):
    return bool(attrs.get("use_length"))


def check_softmax_attrs(opname, attrs):
    t = attrs.get("temperature")
    if t is not None and (t == 0 or not math.isfinite(t)):
        raise AttrError(f"{opname}: temperature={t!r} is invalid: it must be a finite, "
                        f"non-zero number")


def _inputs_checked(opname, names):
    # ``input_names(attrs)`` is the first rule that runs on parsed attributes
    # when a node is made, so value checks that the schema cannot express
    # live here: a bad value fails at graph construction, not at bind.
    def input_names(attrs):
        check_softmax_attrs(opname, attrs)
        return list(names) + (["length"] if use_length(attrs) else [])
    return input_names


def normalize_axis(opname, axis, shape, in_shapes, what="axis"):
    """``axis`` as a non-negative index into ``shape``; ShapeError if out of range."""
    nd = len(shape)
    if not -nd <= axis < nd:
        raise shape_error(opname, f"{what}={axis} is out of range for an input of "
                          f"{nd} dimension(s) {tuple(shape)}", in_shapes)
    return axis + nd if axis < 0 else axis


def first_known(values):
    return next((v for v in values if v is not None), None)


def same_shape_rule(opname):
    """Every input and output has one shape; the axis must exist.  With
    ``use_length`` the last input is the length: the shape without the axis."""
    def infer_shape(attrs, in_shapes, out_shapes):
        masked = use_length(attrs)
        ins = list(in_shapes[:-1]) if masked else list(in_shapes)
        known = first_known(ins + list(out_shapes))
        if known is None:
            return in_shapes, out_shapes
        for s in ins + list(out_shapes):
            if s is not None and tuple(s) != tuple(known):
                raise shape_error(opname, f"shapes must agree, got {tuple(s)} and "
                                  f"{tuple(known)}", in_shapes)
        axis = normalize_axis(opname, attrs["axis"], known, in_shapes)
        lengths = []
        if masked:
            want = tuple(known[:axis]) + tuple(known[axis + 1:])
            if in_shapes[-1] is not None and tuple(in_shapes[-1]) != want:
                raise shape_error(opname, f"length has shape {tuple(in_shapes[-1])}, expected "
                                  f"{want} (the data's without axis {axis})", in_shapes)
            lengths = [want]
        return [known] * len(ins) + lengths, [known] * len(out_shapes)
    return infer_shape


def same_type(attrs, in_types, out_types):
    """One dtype for the data inputs and outputs; a length keeps its own
    (integer, int32 when unknown)."""
    masked = use_length(attrs)
    ins = list(in_types[:-1]) if masked else list(in_types)
    known = first_known(ins + list(out_types))
    lengths = [in_types[-1] if in_types[-1] is not None else np.dtype(np.int32)] if masked else []
    return [known] * len(ins) + lengths, [known] * len(out_types)


def softmax_type(opname):
    """The output has ``dtype`` when given (float16, float32 or float64, as
    MXNet's), the data's otherwise; a length keeps its own (integer, int32
    when unknown)."""
    def rule(attrs, in_types, out_types):
        d, o = in_types[0], out_types[0]
        lengths = ([in_types[-1] if in_types[-1] is not None else np.dtype(np.int32)]
                   if use_length(attrs) else [])
        if attrs["dtype"] is None:
            known = first_known([d, o])
            return [known] + lengths, [known]
        want = np.dtype(attrs["dtype"])
        if d is not None and np.dtype(d).kind != "f":
            raise DTypeError(f"{opname}: dtype={want} needs floating-point data, got "
                             f"{np.dtype(d)}")
        return [d] + lengths, [want]
    return rule


def _cast_back(node, grad):
    """The data's gradient in the data's dtype when the output has another."""
    if node.attrs["dtype"] is None:
        return grad
    return make_node("_cast_like", [grad, node.inputs[0]],
                     name=f"{node.name}_backward_cast").output(0)


def _gradient(backward_name):
    def gradient(node, out_grads):
        masked = use_length(node.attrs)
        g = backward_node(backward_name, [out_grads[0], node.output(0)] + node.inputs[1:], node,
                          {k: node.attrs[k] for k in BACKWARD_ATTRS})
        return [_cast_back(node, g.output(0))] + ([None] if masked else [])
    return gradient


def _register(name, kernel, doc):
    register(OpDef(
        name=name,
        input_names=_inputs_checked(name, ["data"]),
        attrs=dict(SOFTMAX_ATTRS),
        infer_shape=same_shape_rule(name), infer_type=softmax_type(name),
        gradient=_gradient(f"_backward_{name}"),
        inplace=lambda attrs: [(0, 0)],
        half_mirrors=True,
        kernels={"cpu": f"nbdl.kernels.cpu.softmax:prepare_{kernel}",
                 "cuda": f"nbdl.kernels.cuda.softmax:prepare_{kernel}"},
        int_inputs=(1,), doc=doc))
    register(OpDef(
        name=f"_backward_{name}",
        input_names=lambda attrs: ["out_grad", "output"] + (["length"] if use_length(attrs) else []),
        attrs=dict(BACKWARD_ATTRS), int_inputs=(2,),
        infer_shape=same_shape_rule(f"_backward_{name}"), infer_type=same_type,
        # out_grad -> in_grad is a row-local read-then-write
        inplace=lambda attrs: [(0, 0)],
        half_mirrors=True,
        kernels={"cpu": f"nbdl.kernels.cpu.softmax:prepare_{kernel}_backward",
                 "cuda": f"nbdl.kernels.cuda.softmax:prepare_{kernel}_backward"},
        supports_add=True, hidden=True,
        doc=f"Gradient of {name} from its output."))


_register("softmax", "softmax",
          "softmax(data / temperature) along ``axis``, computed stably (max subtracted).")
_register("log_softmax", "log_softmax",
          "log(softmax(data / temperature)) along ``axis``, computed stably.")


def _softmin_grad(node, out_grads):
    t = node.attrs["temperature"]
    g = backward_node("_backward_softmax", [out_grads[0], node.output(0)] + node.inputs[1:], node,
                      {"axis": node.attrs["axis"], "temperature": -(1.0 if t is None else t),
                       "use_length": node.attrs["use_length"]})
    return [_cast_back(node, g.output(0))] + ([None] if use_length(node.attrs) else [])


register(OpDef(
    name="softmin", input_names=_inputs_checked("softmin", ["data"]), attrs=dict(SOFTMAX_ATTRS),
    infer_shape=same_shape_rule("softmin"), infer_type=softmax_type("softmin"),
    gradient=_softmin_grad,
    inplace=lambda attrs: [(0, 0)], int_inputs=(1,),
    half_mirrors=True,
    kernels=kernel_paths("softmax", "prepare_softmin"),
    doc="softmax(-data / temperature) along ``axis`` (MXNet's softmin), on the softmax "
        "kernels with the temperature negated."))
