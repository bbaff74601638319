"""SoftmaxActivation and softmax_cross_entropy (rules only; kernels in
``nbdl.kernels.*.nn_softmax``, SoftmaxActivation on softmax's own kernels).

``SoftmaxActivation(data, mode='instance')`` is the softmax of each instance
(the data flattened to (N, rest)); ``mode='channel'`` is the softmax along
axis 1 at each position (at least 3-D data).  Its gradient
(``_backward_SoftmaxActivation(out_grad, output)``) is softmax's from the
output over the same axis.  (MXNet 1.9.1 computes the instance-mode gradient
of data with more than two axes over axis 1, which is not the gradient of
its forward pass; nbdl's is.)

``softmax_cross_entropy(data, label)``: data (N, K), label (N,) class
indices (float or integer); the output, shape (1,), is
``sum_n -log(max(softmax(data[n])[label[n]], 1e-8))``.  Its gradient to the
data is ``(softmax(data) - one_hot(label)) * out_grad``; the label gets none."""
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import data_type, same_type



# -- SoftmaxActivation --------------------------------------------------------------

SA_ATTRS = {"mode": Attr("str", "instance", choices=("instance", "channel"),
                         doc="Softmax over each instance, or across channels at each "
                             "position.")}


def _sa_shape(opname):
    def infer_shape(attrs, in_shapes, out_shapes):
        known = next((s for s in list(in_shapes) + list(out_shapes) if s is not None), None)
        if known is None:
            return in_shapes, out_shapes
        known = tuple(known)
        need = 3 if attrs["mode"] == "channel" else 1
        if len(known) < need:
            raise shape_error(opname, f"data must have at least {need} dimension(s) in mode "
                              f"{attrs['mode']!r}, got {known}", in_shapes)
        for s in list(in_shapes) + list(out_shapes):
            if s is not None and tuple(s) != known:
                raise shape_error(opname, f"shapes must agree, got {tuple(s)} and {known}",
                                  in_shapes)
        return [known] * len(in_shapes), [known] * len(out_shapes)
    return infer_shape


def _sa_grad(node, out_grads):
    g = backward_node("_backward_SoftmaxActivation", [out_grads[0], node.output(0)], node)
    return [g.output(0)]


register(OpDef(
    name="SoftmaxActivation", input_names=("data",), attrs=dict(SA_ATTRS), unnamed_inputs=True,
    half_mirrors=True,
    infer_shape=_sa_shape("SoftmaxActivation"), infer_type=same_type, gradient=_sa_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("nn_softmax", "prepare_softmax_activation"),
    doc="Softmax of each instance (``mode='instance'``) or across channels "
        "(``mode='channel'``)."))

register(OpDef(
    name="_backward_SoftmaxActivation", input_names=("out_grad", "output"),
    half_mirrors=True,
    attrs=dict(SA_ATTRS), infer_shape=_sa_shape("_backward_SoftmaxActivation"),
    infer_type=same_type, inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("nn_softmax", "prepare_softmax_activation_backward"),
    supports_add=True, hidden=True, doc="Gradient of SoftmaxActivation from its output."))


# -- softmax_cross_entropy ---------------------------------------------------------------

def _xent_shape(attrs, in_shapes, out_shapes):
    d, lab = in_shapes
    if d is None:
        return in_shapes, [(1,)]
    d = tuple(d)
    if len(d) != 2:
        raise shape_error("softmax_cross_entropy", f"data must be 2-D (batch, classes), "
                          f"got {d}", in_shapes)
    if lab is not None and tuple(lab) != (d[0],):
        raise shape_error("softmax_cross_entropy", f"label shape {tuple(lab)} does not match "
                          f"data shape {d}: expected {(d[0],)}", in_shapes)
    return [d, (d[0],)], [(1,)]


def _xent_grad(node, out_grads):
    g = backward_node("_backward_softmax_cross_entropy",
                      [out_grads[0], node.inputs[0], node.inputs[1]], node, {})
    return [g.output(0), None]


def _xent_backward_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[1] if in_shapes[1] is not None else out_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    return [(1,), tuple(d), (tuple(d)[0],)], [tuple(d)]


def _xent_backward_type(attrs, in_types, out_types):
    d = in_types[1] if in_types[1] is not None else out_types[0]
    if d is None:
        return in_types, out_types
    return [d, d, in_types[2] if in_types[2] is not None else d], [d]


def _xent_temp(call):
    # the per-row losses, summed by a second pass
    return [((max(int(call.in_shapes[0][0]), 1),), call.out_dtypes[0])]


register(OpDef(
    name="softmax_cross_entropy", input_names=("data", "label"),
    half_mirrors=True,
    infer_shape=_xent_shape, infer_type=data_type, gradient=_xent_grad, temp=_xent_temp,
    kernels=kernel_paths("nn_softmax", "prepare_softmax_cross_entropy"),
    int_inputs=(1,),
    doc="The summed cross entropy of softmax(data) against class labels, shape (1,)."))

register(OpDef(
    name="_backward_softmax_cross_entropy", input_names=("out_grad", "data", "label"),
    half_mirrors=True,
    infer_shape=_xent_backward_shape, infer_type=_xent_backward_type,
    kernels=kernel_paths("nn_softmax", "prepare_softmax_cross_entropy_backward"),
    supports_add=True, hidden=True, int_inputs=(2,),
    doc="Gradient of softmax_cross_entropy: (softmax(data) - one_hot(label)) * out_grad."))
