"""The output loop of a convolution with what follows it fused in (plain
Python: compiled by ``njit`` for the CPU, by ``cuda.jit(device=True)`` for
CUDA), and the prepare-time flags.

A convolution's result ``acc`` for output channel ``c`` becomes

    y = acc * scale[c] + shift[c]   (+ residual)   (then max(y, 0))

where ``(scale, shift)`` is ``(1, bias)`` for a plain convolution with a
bias, and folds a following inference BatchNorm in: ``scale = gamma /
sqrt(moving_var + eps)`` (gamma 1 under ``fix_gamma``), ``shift = beta -
moving_mean * scale (+ bias * scale)``, BatchNorm's own expression.  The
pair is computed from the arrays at every call (a channel's worth of work),
never folded into the weights at bind time: parameters change between calls
(a Trainer, ``set_data``, arrays written through ``arg_dict``) and nothing
records that they did.
"""
import math

import numpy as np

# bits of a kernel's ``ep`` scalar
EP_AFFINE = 1      # scale and shift (a bias, a folded BatchNorm)
EP_RESIDUAL = 2    # add the residual input
EP_RELU = 4        # then Activation(act_type='relu'): y > 0 ? y : 0 (NaN -> 0)
EP_RELU_NAN = 8    # or the ``relu`` op: NaN stays NaN

# the fused op's ``act_type`` -> its bit
ACT_BITS = {None: 0, "relu": EP_RELU, "relu_nan": EP_RELU_NAN}


def ep_flags(has_bias, has_bn, has_res, act):
    """The ``ep`` scalar for a launch (``act``: a key of ``ACT_BITS``)."""
    return ((EP_AFFINE if (has_bias or has_bn) else 0) | (EP_RESIDUAL if has_res else 0)
            | ACT_BITS[act])


def py_channel_affine(c, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, one):
    """``(scale, shift)`` of output channel ``c``."""
    zero = one - one
    if not has_bn:
        return one, (b[c] if has_bias else zero)
    g = one if fix_gamma else gamma[c]
    scale = g * (one / math.sqrt(mv[c] + eps))
    shift = beta[c] - mm[c] * scale
    if has_bias:
        shift = b[c] * scale + shift
    return scale, shift


def py_finish(v, scale, shift, r, ep, zero):
    """One output value: ``v`` the convolution's sum, ``r`` the residual's
    value (used only with ``EP_RESIDUAL``), ``zero`` 0 in the output's dtype."""
    if ep & EP_AFFINE:
        v = v * scale + shift
    if ep & EP_RESIDUAL:
        v = v + r
    if ep & EP_RELU:
        if not v > zero:
            v = zero
    elif ep & EP_RELU_NAN:
        if not (v != v or v > zero):
            v = zero
    return v


# the forward kernels' arrays after (data, weight), by input name; absent ones
# are empty stand-ins (``Launch.args``)
EPILOGUE_INPUTS = ("bias", "gamma", "beta", "moving_mean", "moving_var", "sum")


def epilogue_args(call, res_rank):
    """For a ``Convolution`` or ``_nbdl_fused_conv`` call: ``(n_in, names,
    pick, flags)``, where ``names`` are the call's inputs (aux included), ``pick`` are the ``Launch.args`` entries of the kernel's
    first eight arrays (data, weight, bias, gamma, beta, moving_mean,
    moving_var, residual; empty stand-ins for absent ones, the residual's of
    rank ``res_rank``), ``n_in`` the call's inputs (the output is array
    ``n_in``, the temps follow) and ``flags`` the scalars ``(has_bias, has_bn,
    fix_gamma, eps, ep)``."""
    a = call.attrs
    names = list(call.op.list_inputs(a)) + list(call.op.list_aux(a))
    at = {n: i for i, n in enumerate(names)}
    has_bias, has_bn, has_res = "bias" in at, "moving_var" in at, "sum" in at
    pick = [at["data"], at["weight"]]
    pick += [at[n] if n in at else (0, (0,)) for n in EPILOGUE_INPUTS[:-1]]
    pick.append(at["sum"] if has_res else (0, (0,) * res_rank))
    dt = np.dtype(call.out_dtypes[0]).type
    flags = (int(has_bias), int(has_bn), int(has_bn and a["bn_fix_gamma"]),
             dt(a["bn_eps"] if has_bn else 0), ep_flags(has_bias, has_bn, has_res,
                                                         a.get("act_type")))
    return len(names), names, pick, flags
