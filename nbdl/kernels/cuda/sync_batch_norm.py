"""CUDA kernels of ``_contrib_SyncBatchNorm`` and its gradient: one thread per
channel for each phase (the per-channel functions of
``kernels/shared/sync_batch_norm`` as device functions); the float64 sums
are copied to the host for the cross-rank sum between the phases (a few
values per channel) and back."""
from numba import cuda

from ...collective import sum_across_ranks
from ...ops.registry import Launch
from ..shared.sync_batch_norm import (py_sbn_backward_channel, py_sbn_forward_channel,
                                      py_sbn_grad_sums_channel, py_sbn_stats_channel,
                                      sbn_scalars, sbn_views)
from ._launch import grid1d

_stats_c = cuda.jit(device=True)(py_sbn_stats_channel)
_fwd_c = cuda.jit(device=True)(py_sbn_forward_channel)
_gsums_c = cuda.jit(device=True)(py_sbn_grad_sums_channel)
_bwd_c = cuda.jit(device=True)(py_sbn_backward_channel)


@cuda.jit
def _stats(x, sums):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _stats_c(x, sums, c)


@cuda.jit
def _normalise(x, gamma, beta, mm, mv, out, mean, var, sums, coef, eps, mom, one, fix_gamma,
               use_batch, r_out, r_mean, r_var):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _fwd_c(x, gamma, beta, mm, mv, out, mean, var, sums, coef, c, eps, mom, one, fix_gamma,
               use_batch, r_out, r_mean, r_var)


@cuda.jit
def _grad_sums(og, x, mean, sums):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _gsums_c(og, x, mean, sums, c)


@cuda.jit
def _backward(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, eps, one, fix_gamma,
              use_batch, r_x, r_g, r_b):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bwd_c(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, c, eps, one, fix_gamma,
               use_batch, r_x, r_g, r_b)


def _reduce_on_host(sums, what):
    host = sums.copy_to_host()
    sum_across_ranks(host, what)
    sums.copy_to_device(host)


def prepare_sync_batch_norm(call):
    data, param, sums, coef = sbn_views(call, True)
    blocks, threads = grid1d(data[1])

    def fn(x, gamma, beta, mm, mv, out, mean, var, s, k, eps, mom, one, fix_gamma, use_batch,
           r_out, r_mean, r_var):
        if use_batch:
            _stats[blocks, threads](x, s)
            _reduce_on_host(s, "SyncBatchNorm statistics")
        _normalise[blocks, threads](x, gamma, beta, mm, mv, out, mean, var, s, k, eps, mom, one,
                                    fix_gamma, use_batch, r_out, r_mean, r_var)
    return Launch(fn, sbn_scalars(call, True),
                  views=[data, param, param, param, param, data, param, param, sums, coef])


def prepare_sync_batch_norm_backward(call):
    data, param, sums, coef = sbn_views(call, False)
    blocks, threads = grid1d(data[1])

    def fn(og, x, gamma, mean, var, dx, dgamma, dbeta, s, k, eps, one, fix_gamma, use_batch,
           r_x, r_g, r_b):
        _grad_sums[blocks, threads](og, x, mean, s)
        if use_batch:
            _reduce_on_host(s[1], "SyncBatchNorm gradient sums")
        _backward[blocks, threads](og, x, gamma, mean, var, dx, dgamma, dbeta, s, k, eps, one,
                                   fix_gamma, use_batch, r_x, r_g, r_b)
    return Launch(fn, sbn_scalars(call, False),
                  views=[data, data, param, param, param, data, param, param, sums, coef])
