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
from .batch_norm import (BN_ATTRS, _inputs, bn_backward_shape_rule, bn_gradient_rule,
                         bn_shape_rule, same_float_type)
from .registry import OpDef, kernel_paths, register, shape_error

_NAME = "_contrib_SyncBatchNorm"
SBN_ATTRS = {
    **{k: BN_ATTRS[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats",
                                "output_mean_var")},
    "ndev": Attr("int", 1, doc="MXNet's devices per process; recorded (one device per "
                               "rank here)."),
    "key": Attr("str", doc="MXNet's synchronisation key of the layer; recorded (the ranks "
                           "match layers by schedule order)."),
}
SBN_BACKWARD_ATTRS = {k: SBN_ATTRS[k] for k in ("eps", "fix_gamma", "use_global_stats")}


def _channel_axis(opname, attrs, data, in_shapes):
    if len(data) < 2:
        raise shape_error(opname, f"data must have at least 2 dimensions (N, C, ...), got "
                          f"{tuple(data)}", in_shapes)
    return 1


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
    infer_shape=bn_shape_rule(_NAME, _channel_axis), infer_type=same_float_type,
    gradient=bn_gradient_rule("_backward_contrib_SyncBatchNorm", SBN_BACKWARD_ATTRS),
    temp=sbn_temp,
    kernels=kernel_paths("sync_batch_norm", "prepare_sync_batch_norm"),
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
    infer_shape=bn_backward_shape_rule("_backward_contrib_SyncBatchNorm", _channel_axis, "var"),
    infer_type=same_float_type, temp=sbn_temp,
    kernels=kernel_paths("sync_batch_norm", "prepare_sync_batch_norm_backward"),
    supports_add=True, train_aware=True, hidden=True,
    doc="SyncBatchNorm's data gradient (with the ranks' totals) and this rank's gamma and "
        "beta gradients."))
