"""``_contrib_SyncBatchNorm`` (MXNet 1.9.1's name and attributes; rules only,
kernels in ``nbdl.kernels.*.sync_batch_norm``).

Batch normalisation over axis 1 whose batch statistics cover the batches of
every rank of a distributed job.  Inputs ``data``, ``gamma``, ``beta``, aux
``moving_mean``, ``moving_var``; attributes ``eps=1e-3``, ``momentum=0.9``,
``fix_gamma=True``, ``use_global_stats=False``, ``output_mean_var=False``,
``ndev=1`` and ``key`` (MXNet's devices-per-process count and the layer's
synchronisation key: nbdl runs one device per process and matches the
layers of the ranks by their order in the schedule, so both are recorded and
not used).  Outputs ``output``, ``mean``, ``var`` (as MXNet's SyncBatchNorm,
``var`` is the biased variance, not BatchNorm's inverse std).  In a single
process it computes exactly what ``BatchNorm`` over axis 1 computes.

The kernel runs in three phases, so that the cross-rank step sits between
two kernels and not inside one (docs/architecture.md, "Kernels with a
cross-rank phase"):

1. *stats*: per channel the local count, sum and sum of squares, in float64
   (a temp of ``(C, 3)``);
2. *reduce*: ``nbdl.collective.sum_across_ranks`` sums that temp over the
   ranks (a no-op in one process);
3. *normalise*: mean and biased variance from the totals, the moving
   statistics updated in place (``moving = moving * momentum + batch * (1 -
   momentum)``), the output written.

``_backward_contrib_SyncBatchNorm(out_grad, data, gamma, mean, var) ->
(data_grad, gamma_grad, beta_grad)`` does the same with the per-channel
sums of ``out_grad`` and ``out_grad * (data - mean)``: the data gradient
uses the totals over the ranks, while gamma's and beta's gradients stay this
rank's own sums (the trainer's gradient reduction adds the ranks').  Outside
training, or with ``use_global_stats``, the moving statistics are used and
nothing is reduced.
"""
from .attrs import Attr
from .batch_norm import _check, _inputs, same_float_type
from .ir import make_node
from .registry import OpDef, register, shape_error

_NAME = "_contrib_SyncBatchNorm"
SBN_ATTRS = {
    "eps": Attr("float", 1e-3, doc="Added to the variance before the square root."),
    "momentum": Attr("float", 0.9, doc="Momentum of the moving statistics."),
    "fix_gamma": Attr("bool", True, doc="Treat gamma as 1 (its gradient is 0)."),
    "use_global_stats": Attr("bool", False, doc="Normalise with the moving statistics also "
                                                "in training."),
    "output_mean_var": Attr("bool", False, doc="Also output the mean and variance."),
    "ndev": Attr("int", 1, doc="MXNet's devices per process; recorded (one device per "
                               "rank here)."),
    "key": Attr("str", doc="MXNet's synchronisation key of the layer; recorded (the ranks "
                           "match layers by schedule order)."),
}
SBN_BACKWARD_ATTRS = {k: SBN_ATTRS[k] for k in ("eps", "fix_gamma", "use_global_stats")}


def _channels(opname, data, in_shapes):
    if len(data) < 2:
        raise shape_error(opname, f"data must have at least 2 dimensions (N, C, ...), got "
                          f"{tuple(data)}", in_shapes)
    return (int(data[1]),)


def _sbn_shape(attrs, in_shapes, out_shapes):
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if data is None:
        c = next((s for s in list(in_shapes[1:]) + list(out_shapes[1:]) if s is not None), None)
        if c is None:
            return in_shapes, out_shapes
        c = tuple(c)
        return [in_shapes[0]] + [c] * 4, [out_shapes[0], c, c]
    data = tuple(data)
    _check(_NAME, "output", out_shapes[0], data, in_shapes)
    param = _channels(_NAME, data, in_shapes)
    for name, s in zip(("gamma", "beta", "moving_mean", "moving_var"), in_shapes[1:]):
        _check(_NAME, name, s, param, in_shapes)
    for name, s in zip(("mean", "var"), out_shapes[1:]):
        _check(_NAME, name, s, param, in_shapes)
    return [data] + [param] * 4, [data, param, param]


def _sbn_backward_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_contrib_SyncBatchNorm"
    data = next((s for s in (in_shapes[1], in_shapes[0], out_shapes[0]) if s is not None), None)
    if data is None:
        return in_shapes, out_shapes
    data = tuple(data)
    param = _channels(opname, data, in_shapes)
    for name, s, want in (("out_grad", in_shapes[0], data), ("data", in_shapes[1], data),
                          ("gamma", in_shapes[2], param), ("mean", in_shapes[3], param),
                          ("var", in_shapes[4], param), ("data_grad", out_shapes[0], data),
                          ("gamma_grad", out_shapes[1], param),
                          ("beta_grad", out_shapes[2], param)):
        _check(opname, name, s, want, in_shapes)
    return [data, data, param, param, param], [data, param, param]


def _sbn_gradient(node, out_grads):
    back = make_node("_backward_contrib_SyncBatchNorm",
                     [out_grads[0], node.inputs[0], node.inputs[1], node.output(1),
                      node.output(2)],
                     {k: node.attrs[k] for k in SBN_BACKWARD_ATTRS},
                     name=f"{node.name}_backward")
    return [back.output(0), back.output(1), back.output(2)]


def sbn_temp(call):
    """Scratch of both directions: the per-channel float64 sums (forward
    ``(C, 3)``: count, sum, sum of squares; backward ``(2, C, 3)``: this
    rank's sums and the copy reduced over the ranks) and ``(C, 4)``
    per-channel coefficients in the data's dtype (so the elementwise loops
    stay in that dtype)."""
    backward = call.op.name.startswith("_backward")
    data = call.in_shapes[1 if backward else 0]
    c = int(data[1])
    sums = (2, c, 3) if backward else (c, 3)
    return [(sums, "float64"), ((c, 4), call.in_dtypes[0])]


def _data_inplace(attrs):
    """The output may take the data's buffer: the statistics are complete
    (phase 1 and 2) before phase 3 writes any output element, and each
    output element reads only its own input element."""
    return [(0, 0)]


register(OpDef(
    name=_NAME,
    input_names=_inputs(_NAME, ["data", "gamma", "beta"]),
    aux_names=("moving_mean", "moving_var"),
    num_outputs=3, output_names=["output", "mean", "var"],
    num_visible_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    attrs=dict(SBN_ATTRS),
    infer_shape=_sbn_shape, infer_type=same_float_type,
    gradient=_sbn_gradient, temp=sbn_temp,
    kernels={"cpu": "nbdl.kernels.cpu.sync_batch_norm:prepare_sync_batch_norm",
             "cuda": "nbdl.kernels.cuda.sync_batch_norm:prepare_sync_batch_norm"},
    inplace=_data_inplace,
    supports_add=True, train_aware=True, mutates_aux=True,
    input_var_init={"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'},
    doc="Batch normalisation over axis 1 with the batch statistics of every rank of a "
        "distributed job (stats, cross-rank reduce, normalise)."))

register(OpDef(
    name="_backward_contrib_SyncBatchNorm",
    input_names=_inputs("_backward_contrib_SyncBatchNorm",
                        ["out_grad", "data", "gamma", "mean", "var"]),
    num_outputs=3, output_names=["data_grad", "gamma_grad", "beta_grad"],
    attrs=dict(SBN_BACKWARD_ATTRS),
    infer_shape=_sbn_backward_shape, infer_type=same_float_type, temp=sbn_temp,
    kernels={"cpu": "nbdl.kernels.cpu.sync_batch_norm:prepare_sync_batch_norm_backward",
             "cuda": "nbdl.kernels.cuda.sync_batch_norm:prepare_sync_batch_norm_backward"},
    supports_add=True, train_aware=True, hidden=True,
    doc="SyncBatchNorm's data gradient (with the ranks' totals) and this rank's gamma and "
        "beta gradients."))
