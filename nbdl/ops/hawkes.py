"""``_contrib_hawkesll``: the log likelihood of univariate Hawkes processes
(MXNet 1.9.1's ``contrib/hawkes_ll``; rules only, kernels in
``nbdl.kernels.*.hawkes``).

Inputs ``lda`` (N, K) background intensities, ``alpha`` (K,) branching
ratios, ``beta`` (K,) decays, ``state`` (N, K) the memory at time 0,
``lags`` (N, T) interarrival times, ``marks`` (N, T) int32 process ids,
``valid_length`` (N,) points per sample, ``max_time`` (N,) the observation
period; outputs ``output`` (N,) the log likelihoods and ``out_state`` (N, K)
the memory at ``max_time``.  Per sample, each point of mark ``k`` adds
``log(lda_k + alpha_k beta_k s_k e) - (lda_k d + alpha_k s_k (1 - e))``
(``d`` the time since the previous point of that mark, ``e = exp(-beta_k
d)``, ``s_k`` the memory) and the memory becomes ``1 + s_k e``; the
compensator up to ``max_time`` is subtracted at the end.

The gradient is MXNet's hidden-named ``_contrib_backward_hawkesll(out_grad,
out_state_grad, lda, alpha, beta, state, lags, marks, valid_length,
max_time)``: gradients of the log likelihood for ``lda``, ``alpha`` and
``beta``; as in MXNet, ``out_state``'s head gradient is not used and no
gradient flows to the state (MXNet leaves that output unwritten) or to the
data inputs (zeros when asked for).  A mark outside ``[0, K)`` raises
``IndexOutOfRange``.
"""
import numpy as np

from ..errors import DTypeError
from .ir import backward_node
from .registry import FLOAT_DTYPES, OpDef, register, shape_error

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
_RANKS = (2, 1, 1, 2, 2, 2, 1, 1)
_I32 = np.dtype(np.int32)


def hawkes_dims(in_shapes, where="_contrib_hawkesll"):
    """(N, T, K) from the eight input shapes (all known), checked as MXNet does."""
    for name, s, r in zip(_INPUTS, in_shapes, _RANKS):
        if len(s) != r:
            raise shape_error(where, f"input {name!r} must be {r}-D, got {tuple(s)}", in_shapes)
    n, t = in_shapes[4]
    k = in_shapes[0][1]
    want = ((n, k), (k,), (k,), (n, k), (n, t), (n, t), (n,), (n,))
    for name, s, w in zip(_INPUTS, in_shapes, want):
        if tuple(s) != w:
            raise shape_error(where, f"input {name!r} has shape {tuple(s)}, expected {w} "
                              f"(N={n}, T={t}, K={k})", in_shapes)
    return n, t, k


def _shape(attrs, in_shapes, out_shapes):
    if any(s is None for s in in_shapes):
        return list(in_shapes), list(out_shapes)
    n, _, k = hawkes_dims([tuple(s) for s in in_shapes])
    return list(in_shapes), [(n,), (n, k)]


def _type(attrs, in_types, out_types):
    known = next((t for i, t in enumerate(list(in_types) + list(out_types))
                  if t is not None and i != 5), None)
    if in_types[5] is not None and np.dtype(in_types[5]) != _I32:
        raise DTypeError(f"_contrib_hawkesll: marks must be int32, got {np.dtype(in_types[5])}")
    ins = [known] * 8
    ins[5] = _I32
    return ins, [known, known]


def _gradient(node, out_grads):
    back = backward_node("_contrib_backward_hawkesll", list(out_grads) + list(node.inputs), node,
                         {})
    return [back.output(0), back.output(1), back.output(2)] + [None] * 5


def _backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    for k in range(8):
        ins[k + 2] = ins[k + 2] if ins[k + 2] is not None else outs[k]
        outs[k] = ins[k + 2]
    if all(s is not None for s in ins[2:]):
        n, _, k = hawkes_dims([tuple(s) for s in ins[2:]], "_contrib_backward_hawkesll")
        ins[0], ins[1] = (n,), (n, k)
    return ins, outs


def _backward_type(attrs, in_types, out_types):
    fwd_in, fwd_out = _type(attrs, in_types[2:], [None, None])
    return fwd_out + fwd_in, list(fwd_in)


_KERNELS = "nbdl.kernels.{}.hawkes:{}"


def _kernels(prepare):
    return {d: _KERNELS.format(d, prepare) for d in ("cpu", "cuda")}


register(OpDef(
    name="_contrib_hawkesll", input_names=_INPUTS, num_outputs=2,
    output_names=("output", "out_state"),
    infer_shape=_shape, infer_type=_type, gradient=_gradient,
    temp=lambda call: [((2,) + tuple(call.in_shapes[0]), call.out_dtypes[0])],
    kernels=_kernels("prepare_hawkesll"), supports_add=True, int_inputs=(5,),
    half_mirrors=True,
    doc="Log likelihood of univariate Hawkes processes on ragged point sequences "
        "(see the module docstring)."))

register(OpDef(
    name="_contrib_backward_hawkesll",
    input_names=("out_grad", "out_state_grad") + _INPUTS, num_outputs=8,
    output_names=tuple(f"{n}_grad" for n in _INPUTS),
    infer_shape=_backward_shape, infer_type=_backward_type, shape_inputs=(1,),
    temp=lambda call: [((6,) + tuple(call.in_shapes[2]), call.out_dtypes[0])],
    kernels=_kernels("prepare_hawkesll_backward"), supports_add=True, int_inputs=(7,),
    dtypes=FLOAT_DTYPES + (_I32,),          # marks_grad is int32, as marks
    half_mirrors=True,
    doc="Gradients of _contrib_hawkesll for lda, alpha and beta (MXNet's backward op)."))
