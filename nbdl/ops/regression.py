"""Loss-output ops: SoftmaxOutput (alias Softmax) and the regression outputs.
Rules only (kernels in nbdl.kernels.*.regression).

These ops' backward ignores the head gradient (``loss_output=True``): the data
gradient is the gradient of the loss against the label, built by a hidden
``_backward_*`` op from the forward *output* and the label.  The label gets
no gradient."""
import numpy as np

from .ir import backward_node, make_node
from .attrs import Attr
from .elemwise_unary import same_shape
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, same_type

def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _label_type(attrs, in_types, out_types):
    """Data and output share a float dtype; an unknown label takes it too."""
    d, lab = in_types
    o = out_types[0]
    d = d if d is not None else o
    if d is None:
        return in_types, out_types
    return [d, lab if lab is not None else d], [d]


# -- SoftmaxOutput ---------------------------------------------------------------

SOFTMAX_OUTPUT_ATTRS = {
    "grad_scale": Attr("float", 1.0, doc="Scales the gradient."),
    "ignore_label": Attr("float", -1.0, doc="Label value ignored when use_ignore."),
    "multi_output": Attr("bool", False, doc="Softmax along axis 1; label (n, d...)."),
    "use_ignore": Attr("bool", False, doc="Zero the gradient of rows labelled ignore_label."),
    "preserve_shape": Attr("bool", False, doc="Softmax along the last axis."),
    "normalization": Attr("str", "null", choices=("null", "batch", "valid"),
                          doc="Divide the gradient by 1, the batch size, or the valid count."),
    "out_grad": Attr("bool", False, doc="Multiply the gradient by the head gradient."),
    "smooth_alpha": Attr("float", 0.0, doc="Label smoothing: target 1-alpha / alpha/(k-1)."),
}


def _softmax_output_label_shapes(attrs, d):
    """Label shapes accepted for data shape ``d``; the first is inferred."""
    d = tuple(d)
    if attrs["multi_output"]:
        n, k = d[0], d[1]
        rest = _size(d) // (n * k) if n * k else _size(d[2:])
        shapes = [(n,) + d[2:], (n, rest), (n, 1) + d[2:], d]
        return [s for i, s in enumerate(shapes) if s not in shapes[:i]]
    if attrs["preserve_shape"]:
        return [d[:-1], d]
    return [(d[0],), d]


def _softmax_output_shape(opname):
    def infer_shape(attrs, in_shapes, out_shapes):
        d, lab = in_shapes
        d = known_shape(d, out_shapes[0])
        if d is None:
            return in_shapes, out_shapes
        if len(d) < 2:
            raise shape_error(opname, f"data must have at least 2 dimensions (batch, classes), "
                              f"got {d}", in_shapes)
        accepted = _softmax_output_label_shapes(attrs, d)
        if lab is None:
            lab = accepted[0]
        elif tuple(lab) not in accepted:
            raise shape_error(opname, f"label shape {tuple(lab)} does not match data shape {d}: "
                              f"expected {' or '.join(str(s) for s in accepted)}", in_shapes)
        return [d, tuple(lab)], [d]
    return infer_shape


def _check_softmax_output(attrs):
    from ..errors import AttrError
    a = attrs.get("smooth_alpha", 0.0)
    if not 0.0 <= a < 1.0:
        raise AttrError(f"SoftmaxOutput: smooth_alpha={a!r} is invalid: it must be in [0, 1)")
    if attrs["multi_output"] and attrs["preserve_shape"]:
        raise AttrError("SoftmaxOutput: multi_output and preserve_shape cannot both be set "
                        "(softmax along axis 1 or along the last axis)")


def _softmax_output_inputs(attrs):
    # the first rule run on parsed attributes: value checks fail at graph build
    _check_softmax_output(attrs)
    return ["data", "label"]


def _softmax_output_grad(node, out_grads):
    ins = [node.output(0), node.inputs[1]]
    if node.attrs["out_grad"]:
        ins.append(out_grads[0])
    g = backward_node("_backward_SoftmaxOutput", ins, node)
    return [g.output(0), None]


def _backward_softmax_output_inputs(attrs):
    return ["output", "label"] + (["out_grad"] if attrs["out_grad"] else [])


def _backward_softmax_output_shape(attrs, in_shapes, out_shapes):
    o = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if o is None:
        return in_shapes, out_shapes
    new_in = [o] + list(in_shapes[1:])
    if len(new_in) == 3:
        new_in[2] = o
    return new_in, [o]


def _backward_softmax_output_type(attrs, in_types, out_types):
    o = in_types[0] if in_types[0] is not None else out_types[0]
    if o is None:
        return in_types, out_types
    label = in_types[1] if in_types[1] is not None else o
    new_in = [o, label] + ([o] if len(in_types) == 3 else [])
    return new_in, [o]


def _softmax_output_temp(call):
    # one counter for 'valid' normalisation (the CUDA kernels count atomically)
    return [((1,), np.dtype(np.int32))]


register(OpDef(
    name="SoftmaxOutput",
    half_mirrors=True,
    input_names=_softmax_output_inputs,
    attrs=dict(SOFTMAX_OUTPUT_ATTRS),
    infer_shape=_softmax_output_shape("SoftmaxOutput"), infer_type=_label_type,
    gradient=_softmax_output_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("regression", "prepare_softmax_output"),
    loss_output=True, int_inputs=(1,),
    doc="Softmax in the forward pass; in the backward pass the gradient of the "
        "cross-entropy loss against ``label`` (class indices, or probabilities of "
        "the data's shape), ignoring the head gradient."),
    aliases=("Softmax",))

register(OpDef(
    name="_backward_SoftmaxOutput",
    half_mirrors=True,
    input_names=_backward_softmax_output_inputs,
    attrs=dict(SOFTMAX_OUTPUT_ATTRS),
    infer_shape=_backward_softmax_output_shape, infer_type=_backward_softmax_output_type,
    # the gradient may take the softmax output's buffer: each element reads
    # only its own output value (and its row's label)
    inplace=lambda attrs: [(0, 0)],
    temp=_softmax_output_temp,
    kernels=kernel_paths("regression", "prepare_softmax_output_backward"),
    supports_add=True, hidden=True, int_inputs=(1,),
    doc="Gradient of SoftmaxOutput from its output and label."))


# -- regression outputs ------------------------------------------------------------

REGRESSION_ATTRS = {"grad_scale": Attr("float", 1.0, doc="Scales the gradient.")}


def _regression_shape(opname):
    def infer_shape(attrs, in_shapes, out_shapes):
        d, lab = in_shapes
        d = known_shape(d, out_shapes[0])
        if d is None:
            return in_shapes, out_shapes
        if lab is None:
            # MXNet: a (n, 1) output takes a (n,) label by default
            lab = (d[0],) if len(d) == 2 and d[1] == 1 else d
        else:
            lab = tuple(lab)
            if len(d) == 0 or len(lab) == 0 or lab[0] != d[0] or _size(lab) != _size(d):
                raise shape_error(opname, f"label shape {lab} does not match data shape {d}: "
                                  f"it must have the same batch size ({d[0] if d else '?'}) "
                                  f"and the same number of elements ({_size(d)})", in_shapes)
        return [d, lab], [d]
    return infer_shape


def _regression_grad(backward_name):
    def gradient(node, out_grads):
        g = backward_node(backward_name, [node.output(0), node.inputs[1]], node)
        return [g.output(0), None]
    return gradient


def _backward_regression_shape(attrs, in_shapes, out_shapes):
    o = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    return ([o, in_shapes[1]], [o]) if o is not None else (in_shapes, out_shapes)


def _register_regression(name, kernel, backward_name, doc):
    register(OpDef(
        name=name,
        half_mirrors=True,
        input_names=("data", "label"),
        attrs=dict(REGRESSION_ATTRS),
        infer_shape=_regression_shape(name), infer_type=_label_type,
        gradient=_regression_grad(backward_name),
        inplace=lambda attrs: [(0, 0)],
        kernels={"cpu": f"nbdl.kernels.cpu.regression:prepare_{kernel}_forward",
                 "cuda": f"nbdl.kernels.cuda.regression:prepare_{kernel}_forward"},
        loss_output=True, int_inputs=(1,),
        doc=doc))
    register(OpDef(
        name=backward_name,
        half_mirrors=True,
        input_names=("output", "label"),
        attrs=dict(REGRESSION_ATTRS),
        infer_shape=_backward_regression_shape, infer_type=_backward_softmax_output_type,
        inplace=lambda attrs: [(0, 0)],
        kernels={"cpu": f"nbdl.kernels.cpu.regression:prepare_{kernel}_backward",
                 "cuda": f"nbdl.kernels.cuda.regression:prepare_{kernel}_backward"},
        supports_add=True, hidden=True, int_inputs=(1,),
        doc=f"Gradient of {name} from its output and label."))


_register_regression(
    "LinearRegressionOutput", "linear", "_backward_linear_reg_out",
    "Identity forward; backward (out - label) * grad_scale / num_output "
    "(num_output = label.size / batch), ignoring the head gradient.")
_register_regression(
    "LogisticRegressionOutput", "logistic", "_backward_logistic_reg_out",
    "Sigmoid forward; backward (sigmoid(data) - label) * grad_scale / num_output, "
    "ignoring the head gradient.")
_register_regression(
    "MAERegressionOutput", "mae", "_backward_mae_reg_out",
    "Identity forward; backward sign(out - label) * grad_scale / num_output, "
    "ignoring the head gradient.")


# -- MakeLoss ---------------------------------------------------------------------

MAKE_LOSS_ATTRS = {
    "grad_scale": Attr("float", 1.0, doc="The gradient of every element."),
    "valid_thresh": Attr("float", 0.0, doc="Elements above it count as valid ('valid')."),
    "normalization": Attr("str", "null", choices=("null", "batch", "valid"),
                          doc="Divide the gradient by 1, the batch size, or the number of "
                              "elements above valid_thresh (at least 1)."),
}


def _make_loss_grad(node, out_grads):
    """``grad_scale`` everywhere, divided by the batch size or the valid
    count: built from ones_like, sums and broadcast_div (no kernel of its own)."""
    x = node.inputs[0]
    attrs = node.attrs
    name = node.name

    def op(op_name, inputs, suffix, **kw):
        return make_node(op_name, inputs, kw, name=f"{name}_{suffix}").output(0)

    ones = op("ones_like", [x], "backward_ones")
    grad = op("_mul_scalar", [ones], "backward_scale", scalar=attrs["grad_scale"])
    if attrs["normalization"] == "batch":
        count = op("sum", [ones], "backward_batch", axis=(0,), keepdims=True)
    elif attrs["normalization"] == "valid":
        valid = op("_greater_scalar", [x], "backward_valid", scalar=attrs["valid_thresh"])
        total = op("sum", [valid], "backward_count", keepdims=True)
        count = op("_maximum_scalar", [total], "backward_count1", scalar=1.0)
    else:
        return [grad]
    return [op("broadcast_div", [grad, count], "backward")]


register(OpDef(
    name="MakeLoss",
    half_mirrors=True,
    input_names=("data",),
    attrs=dict(MAKE_LOSS_ATTRS),
    infer_shape=same_shape, infer_type=same_type,
    gradient=_make_loss_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("elemwise_unary", "prepare_copy"),
    supports_add=True, loss_output=True,
    doc="Marks its input as a loss: identity forward; backward ``grad_scale`` "
        "(over the batch size or the valid count by ``normalization``), "
        "ignoring the head gradient."),
    aliases=("make_loss",))
