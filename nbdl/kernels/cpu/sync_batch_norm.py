"""CPU kernels of ``_contrib_SyncBatchNorm`` and its gradient: the per-channel
functions of ``kernels/shared/sync_batch_norm`` compiled with ``njit``, run
as three phases (statistics, the cross-rank sum of ``nbdl.collective``,
normalisation) by one launch function.  That function is plain Python (the
reduce phase calls MPI), so a schedule holding this op runs its Python loop,
not a generated driver; the phases themselves are compiled loops."""
from ..shared.jit import njit

from ...collective import sum_across_ranks
from ...ops.registry import Launch
from ..shared.sync_batch_norm import (py_sbn_backward_channel, py_sbn_forward_channel,
                                      py_sbn_grad_sums_channel, py_sbn_stats_channel,
                                      sbn_scalars, sbn_views)

_stats_c = njit(cache=True, inline="always")(py_sbn_stats_channel)
_fwd_c = njit(cache=True, inline="always")(py_sbn_forward_channel)
_gsums_c = njit(cache=True, inline="always")(py_sbn_grad_sums_channel)
_bwd_c = njit(cache=True, inline="always")(py_sbn_backward_channel)


@njit(cache=True)
def sbn_stats(x, sums):
    for c in range(x.shape[1]):
        _stats_c(x, sums, c)


@njit(cache=True)
def sbn_normalise(x, gamma, beta, mm, mv, out, mean, var, sums, coef, eps, mom, one, fix_gamma,
                  use_batch, r_out, r_mean, r_var):
    for c in range(x.shape[1]):
        _fwd_c(x, gamma, beta, mm, mv, out, mean, var, sums, coef, c, eps, mom, one, fix_gamma,
               use_batch, r_out, r_mean, r_var)


@njit(cache=True)
def sbn_grad_sums(og, x, mean, sums):
    for c in range(x.shape[1]):
        _gsums_c(og, x, mean, sums, c)


@njit(cache=True)
def sbn_backward(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, eps, one, fix_gamma,
                 use_batch, r_x, r_g, r_b):
    for c in range(x.shape[1]):
        _bwd_c(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, c, eps, one, fix_gamma,
               use_batch, r_x, r_g, r_b)


def sync_batch_norm(x, gamma, beta, mm, mv, out, mean, var, sums, coef, eps, mom, one,
                    fix_gamma, use_batch, r_out, r_mean, r_var):
    """Forward: statistics, their sum over the ranks, normalisation."""
    if use_batch:
        sbn_stats(x, sums)
        sum_across_ranks(sums, "SyncBatchNorm statistics")
    sbn_normalise(x, gamma, beta, mm, mv, out, mean, var, sums, coef, eps, mom, one, fix_gamma,
                  use_batch, r_out, r_mean, r_var)


def sync_batch_norm_backward(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, eps, one,
                             fix_gamma, use_batch, r_x, r_g, r_b):
    """Backward: gradient sums, their sum over the ranks, the gradients."""
    sbn_grad_sums(og, x, mean, sums)
    if use_batch:
        sum_across_ranks(sums[1], "SyncBatchNorm gradient sums")
    sbn_backward(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, eps, one, fix_gamma,
                 use_batch, r_x, r_g, r_b)


def prepare_sync_batch_norm(call):
    data, param, sums, coef = sbn_views(call, True)
    return Launch(sync_batch_norm, sbn_scalars(call, True),
                  views=[data, param, param, param, param, data, param, param, sums, coef])


def prepare_sync_batch_norm_backward(call):
    data, param, sums, coef = sbn_views(call, False)
    return Launch(sync_batch_norm_backward, sbn_scalars(call, False),
                  views=[data, data, param, param, param, data, param, param, sums, coef])
