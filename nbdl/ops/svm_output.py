"""SVMOutput (rules only; kernels in ``nbdl.kernels.*.svm_output``).

``SVMOutput(data, label, margin=1, regularization_coefficient=1,
use_linear=False)`` is the identity forward.  Like the regression outputs,
its backward ignores the head gradient (``loss_output``): with the data
seen as (N, K) rows and ``y = label[n]`` (label shape = the data's without
its last axis), the gradient of the L2-SVM loss is
``-2 * c * (margin - x[n, y])`` at ``y`` when ``margin > x[n, y]`` and
``2 * c * (margin + x[n, k])`` elsewhere when ``margin > -x[n, k]`` (0
otherwise); with ``use_linear`` (L1-SVM) it is ``-c`` and ``c`` under the
same conditions (``c`` = regularization_coefficient).  The label gets none."""
import numpy as np

from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import data_type, known_shape

SVM_ATTRS = {
    "margin": Attr("float", 1.0, doc="Outputs inside this margin are penalised."),
    "regularization_coefficient": Attr("float", 1.0, doc="Scales the gradient."),
    "use_linear": Attr("bool", False, doc="L1-SVM objective (L2-SVM by default)."),
}


def _svm_shape(attrs, in_shapes, out_shapes):
    d, lab = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if len(d) < 2:
        raise shape_error("SVMOutput", f"data must have at least 2 dimensions (batch, classes), "
                          f"got {d}", in_shapes)
    want = d[:-1]
    if lab is not None and tuple(lab) != want:
        raise shape_error("SVMOutput", f"label shape {tuple(lab)} does not match data shape "
                          f"{d}: expected {want}", in_shapes)
    return [d, want], [d]


def _svm_grad(node, out_grads):
    g = backward_node("_backward_SVMOutput", [node.output(0), node.inputs[1]], node)
    return [g.output(0), None]


def _svm_backward_shape(attrs, in_shapes, out_shapes):
    o = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if o is None:
        return in_shapes, out_shapes
    return [tuple(o), tuple(o)[:-1]], [tuple(o)]


def svm_rows(shape):
    """``(N, K)``: the data as rows of classes (MXNet's FlatTo2D)."""
    shape = tuple(int(d) for d in shape)
    size = int(np.prod(shape, dtype=np.int64))
    k = shape[-1]
    return (size // k if k else int(np.prod(shape[:-1], dtype=np.int64)), k)


register(OpDef(
    name="SVMOutput", input_names=("data", "label"), attrs=dict(SVM_ATTRS),
    infer_shape=_svm_shape, infer_type=data_type, gradient=_svm_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("svm_output", "prepare_svm_forward"),
    loss_output=True, int_inputs=(1,), half_mirrors=True,
    doc="Identity forward; backward the L2-SVM (or L1-SVM, ``use_linear``) loss gradient "
        "against the class labels, ignoring the head gradient."))

register(OpDef(
    name="_backward_SVMOutput", input_names=("output", "label"), attrs=dict(SVM_ATTRS),
    infer_shape=_svm_backward_shape, infer_type=data_type,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("svm_output", "prepare_svm_backward"),
    supports_add=True, hidden=True, int_inputs=(1,), half_mirrors=True,
    doc="Gradient of SVMOutput from its output and label."))
