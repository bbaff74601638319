"""The optimizers' per-element update arithmetic, written once: each ``*_step``
returns the new weight (and states) of one element.  ``kernels.cpu.optimizer``
compiles them with ``njit`` into its in-place loops, ``kernels.cuda.optimizer``
with ``cuda.jit(device=True)``.  Every scalar arrives in the weight's dtype and
constants are ``np.float32(...)``, so a float32 update stays float32; only
``math``/``min``/``max`` and arithmetic appear, and no step calls another (a
CPU dispatcher cannot be called from a CUDA device function, so clipping is
written out each time)."""
import math

import numpy as np

from ...ops.registry import REQ_NULL


def sgd_step(w, g, lr, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    return (np.float32(1.0) - lr * wd) * w - lr * x


def sgd_mom_step(w, g, mom, lr, momentum, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    mom = momentum * mom - lr * wd * w - lr * x
    return w + mom, mom


def nag_mom_step(w, g, mom, lr, momentum, wd, rescale, clip, decay_new):
    # MXNet 1.x's nag_mom_update: the momentum holds lr-scaled steps, and its
    # weight-decay term reads the weight array after the output was written:
    # the new weight when the update is in place (out=weight, and always in
    # the mp_ form, which updates weight32), the old one otherwise (decay_new)
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    w_new = w + momentum * momentum * mom - (np.float32(1.0) + momentum) * lr * (x + wd * w)
    w_decay = w_new if decay_new else w
    return w_new, momentum * mom - lr * (x + wd * w_decay)


def adam_step(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale, clip):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    mean = beta1 * mean + (one - beta1) * x
    var = beta2 * var + (one - beta2) * x * x
    return w - lr * mean / (math.sqrt(var) + epsilon), mean, var


def adamw_step(w, g, mean, var, lr, eta, beta1, beta2, epsilon, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    mean = beta1 * mean + (one - beta1) * x
    var = beta2 * var + (one - beta2) * x * x
    return w - eta * (lr * mean / (math.sqrt(var) + epsilon) + wd * w), mean, var


def rmsprop_step(w, g, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    n = (np.float32(1.0) - gamma1) * x * x + gamma1 * n
    w = w - lr * x / math.sqrt(n + epsilon)
    if clip_weights >= 0:
        w = min(max(w, -clip_weights), clip_weights)
    return w, n


def rmspropalex_step(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rescale, clip,
                     clip_weights):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    n = (one - gamma1) * x * x + gamma1 * n
    gs = (one - gamma1) * x + gamma1 * gs
    delta = gamma2 * delta - lr * x / math.sqrt(n - gs * gs + epsilon)
    w = w + delta
    if clip_weights >= 0:
        w = min(max(w, -clip_weights), clip_weights)
    return w, n, gs, delta


def adagrad_step(w, g, history, lr, epsilon, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    history = history + x * x
    return w - lr * (x / math.sqrt(history + epsilon) + wd * w), history


def adadelta_step(w, g, acc_g, acc_delta, rho, epsilon, wd, rescale, clip):
    # MXNet 1.x: no learning rate; weight decay applied to the weight directly
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    acc_g = rho * acc_g + (one - rho) * x * x
    d = math.sqrt(acc_delta + epsilon) / math.sqrt(acc_g + epsilon) * x
    acc_delta = rho * acc_delta + (one - rho) * d * d
    return w - (d + wd * w), acc_g, acc_delta


def adamax_step(w, g, m, u, lr, beta1, beta2, wd, rescale, clip):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    m = beta1 * m + (np.float32(1.0) - beta1) * x
    u = max(beta2 * u, abs(x))
    if u > 0:   # u == 0 only when every gradient so far was 0, and then m == 0 too
        w = w - lr * m / u
    return w, m, u


def nadam_step(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g, coef_m,
               coef_v):
    """``coef_g = (1 - mu_t) / (1 - prod mu_1..t)``, ``coef_m = mu_{t+1} /
    (1 - prod mu_1..t+1)``, ``coef_v = 1 / (1 - beta2**t)`` (from Python)."""
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    m = beta1 * m + (one - beta1) * x
    v = beta2 * v + (one - beta2) * x * x
    m_bar = coef_g * x + coef_m * m
    return w - lr * m_bar / (math.sqrt(v * coef_v) + epsilon), m, v


def lamb_moments_step(g, mean, var, beta1, beta2, rescale, clip):
    """LAMB's moments for one element."""
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    return beta1 * mean + (one - beta1) * x, beta2 * var + (one - beta2) * x * x


def lamb_coefs(beta1, beta2, t, bias_correction):
    """LAMB's bias corrections ``(1 / (1 - beta1**t), 1 / (1 - beta2**t))``,
    ``(1, 1)`` without ``bias_correction``, in the scalars' dtype."""
    one = beta1 - beta1 + 1
    if bias_correction != 0:
        return one / (one - beta1 ** t), one / (one - beta2 ** t)
    return one, one


def lamb_direction(w, mean, var, epsilon, wd, coef1, coef2):
    """``mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` with ``coef1 = 1 /
    (1 - beta1**t)``, ``coef2 = 1 / (1 - beta2**t)`` (1 without bias correction)."""
    return mean * coef1 / (math.sqrt(var * coef2) + epsilon) + wd * w


def lamb_trust_lr(r1, r2, lr, lower_bound, upper_bound):
    """LAMB phase 2's rate: ``lr * r1 / r2`` with ``r1`` (the weight's norm)
    clamped to the bounds that are >= 0; ``lr`` when either norm is 0."""
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    if r1 == 0 or r2 == 0:
        return lr
    return lr * r1 / r2


def ftrl_step(w, g, z, n, lr, lamda1, beta, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    z = z + x - (math.sqrt(n + x * x) - math.sqrt(n)) * w / lr
    n = n + x * x
    if abs(z) > lamda1:
        sz = lamda1 if z > 0 else -lamda1
        w = (sz - z) / ((beta + math.sqrt(n)) / lr + wd)
    else:
        w = z * np.float32(0.0)
    return w, z, n


def signsgd_step(w, g, lr, wd):
    w = (np.float32(1.0) - lr * wd) * w
    if g > 0:
        w = w - lr
    elif g < 0:
        w = w + lr
    return w


def signum_step(w, g, mom, lr, momentum, wd, rescale, clip, wd_lh):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    keep = np.float32(1.0) - momentum
    mom = momentum * mom - keep * wd * w - keep * x
    w = (np.float32(1.0) - lr * wd_lh) * w
    if mom > 0:
        w = w + lr
    elif mom < 0:
        w = w - lr
    return w, mom


def ftml_step(w, g, d, v, z, lr, beta1, beta2, epsilon, wd, rescale, clip, coef1, coef2):
    """FTML (Zheng & Kwok 2017); ``coef1 = 1 - beta1**t``, ``coef2 = 1 - beta2**t``."""
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    v = beta2 * v + (one - beta2) * x * x
    d_t = coef1 / lr * (math.sqrt(v / coef2) + epsilon)
    z = beta1 * z + (one - beta1) * x - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def sgld_step(w, g, noise, lr, wd, rescale, clip):
    """SGLD: half a gradient step plus the given N(0, lr) noise."""
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    return w - lr / np.float32(2.0) * (x + wd * w) + noise


def group_adagrad_row(w, g, history, out, r, lr, rescale, clip, epsilon, row_len, write):
    """Row ``r`` of ``_contrib_group_adagrad_update`` (``w``, ``g``, ``out``:
    (rows, L); ``history``: (rows,)), as MXNet's kernel: the row's mean
    square of the clipped, rescaled gradient added to its history, then
    ``w - lr * x / sqrt(history + epsilon)``."""
    n = w.shape[1]
    ssq = rescale - rescale
    for j in range(n):
        x = rescale * g[r, j]
        if clip >= 0:
            x = min(max(x, -clip), clip)
        ssq += x * x
    h = history[r] + ssq / row_len
    history[r] = h
    if write:
        d = math.sqrt(h + epsilon)
        for j in range(n):
            x = rescale * g[r, j]
            if clip >= 0:
                x = min(max(x, -clip), clip)
            out[r, j] = w[r, j] - lr * x / d


def lars_step(lr, w_sum_sq, g_sum_sq, wd, eta, eps, rescale):
    """``multi_lars``: ``lr * eta * |w| / (|g| * rescale + wd * |w| + eps)``
    where both norms are positive, else ``lr``."""
    w_norm = math.sqrt(w_sum_sq)
    if w_norm > 0 and g_sum_sq > 0:
        return lr * eta * w_norm / (math.sqrt(g_sum_sq) * rescale + wd * w_norm + eps)
    return lr


# -- prepare-time helpers (Python, used by both devices' ``prepare``) ---------------

# op name -> the name of its kernel in each device's optimizer module (the
# hidden nbdl ops drop their ``_nbdl_`` prefix; other ops' kernels carry
# the op's name)
KERNEL_OF_OP = {
    "_adamw_update": "adamw_update",
    "_nbdl_adagrad_update": "adagrad_update",
    "_nbdl_adadelta_update": "adadelta_update",
    "_nbdl_adamax_update": "adamax_update",
    "_nbdl_nadam_update": "nadam_update",
    "_nbdl_sgld_update": "sgld_update",
}


def flat_views(call):
    """Every input and output viewed flat: the update loops are 1-D."""
    shapes = list(call.in_shapes) + list(call.out_shapes)
    return [(int(np.prod(s, dtype=np.int64)),) for s in shapes]


def update_scalars(call, dtype):
    """``(req, *scalar_attrs)`` of a one-tensor update: the write request of
    its output, then the op's ``scalar_attrs`` in their declared order, each
    in ``dtype`` (the dtype the update computes in), as ``OpDef.scalar_attrs``
    requires."""
    t = np.dtype(dtype).type
    return (int(call.req[0]),) + tuple(t(call.attrs[k]) for k in call.op.scalar_attrs)


def group_adagrad_plan(call):
    """Views (weight, grad, history, out as rows) and scalars ``(req, row
    length, *scalar_attrs)`` of ``_contrib_group_adagrad_update``."""
    shape = tuple(call.in_shapes[0])
    rows = shape[0] if shape else 1
    row_len = int(np.prod(shape[1:], dtype=np.int64)) if shape else 1
    t = np.dtype(call.in_dtypes[0]).type
    views = [(rows, row_len), (rows, row_len), (rows,), (rows, row_len)]
    scalars = update_scalars(call, call.in_dtypes[0])
    return views, scalars[:1] + (t(row_len),) + scalars[1:], rows


def multi_scalars(call):
    """``(reqs, *scalar_attrs)`` of a ``multi_*`` update: a tuple with each
    output's write request, then the scalar attributes as Python values
    (``lrs``/``wds`` tuples of floats); the launcher converts them per tensor."""
    vals = []
    for k in call.op.scalar_attrs:
        v = call.attrs[k]
        vals.append(tuple(float(x) for x in v) if isinstance(v, tuple) else float(v))
    return (tuple(int(r) for r in call.req),) + tuple(vals)


# inputs per weight and the one-tensor update each multi_* op runs per weight
MULTI = {
    "multi_sgd_update": (2, "sgd_update"),
    "multi_sgd_mom_update": (3, "sgd_mom_update"),
    "multi_mp_sgd_update": (3, "mp_sgd_update"),
    "multi_mp_sgd_mom_update": (4, "mp_sgd_mom_update"),
}


def multi_tensor_scalars(op_name, k, lrs, wds, rest):
    """The scalars (after req) of weight ``k``'s one-tensor update: ``lr``,
    [``momentum``], ``wd``, ``rescale_grad``, ``clip_gradient`` as Python
    floats (``rest`` is the op's scalars after ``lrs``/``wds``)."""
    if "mom" in op_name:
        momentum, rescale, clip = rest
        return (lrs[k], momentum, wds[k], rescale, clip)
    rescale, clip = rest
    return (lrs[k], wds[k], rescale, clip)


def preloaded_plan(call):
    """``(mixed precision, momentum, scalars, unpack)`` of a
    ``preloaded_multi_*`` call: ``scalars`` is ``(reqs, [momentum,]
    rescale_grad, clip_gradient)`` with the floats as Python values, and
    ``unpack(args)`` turns the launch's arguments into ``(momentum, rescale,
    clip, lrs, wds, weights)`` with the scalars in the update's dtype and
    ``weights`` a ``(w, g, mom, w32, out, req)`` per weight, flat (``mom``
    and ``w32`` stand-ins when the op has none: the kernels do not write
    them then)."""
    name = call.op.name
    mp, has_mom = "_mp_" in name, "_mom_" in name
    per = 2 + has_mom + mp
    n = len(call.out_shapes)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in call.out_shapes]
    t = np.float32 if mp else np.dtype(call.in_dtypes[0]).type
    vals = tuple(float(call.attrs[k]) for k in call.op.scalar_attrs)

    def unpack(args):
        reqs, *rest = args[per * n + 2 + n:]
        momentum, rescale, clip = (t(v) for v in ([0.0] if not has_mom else []) + rest)
        weights = []
        for k in range(n):
            group = [a.reshape(sizes[k]) for a in args[per * k:per * k + per]]
            w, g = group[0], group[1]
            weights.append((w, g, group[2] if has_mom else group[-1], group[-1],
                            args[per * n + 2 + k].reshape(sizes[k]), reqs[k]))
        return momentum, rescale, clip, args[per * n], args[per * n + 1], weights
    return mp, has_mom, (tuple(int(r) for r in call.req),) + vals, unpack


def multi_sum_sq_run(call, begin, add_array, finish):
    """The host function of a ``multi_sum_sq`` launch, ``run(*arrays, out,
    acc)``: ``begin(acc)``, then ``add_array(flat array i, acc, i)`` for each
    input (its sum of squares into the float64 accumulator ``acc[i]``), then
    ``finish(acc, out, req)``; nothing when the output's req is null.

    Parameters
    ----------
    call : Call
        The ``multi_sum_sq`` call.
    begin, add_array, finish : callable
        The device's steps (``begin`` may do nothing).

    Returns
    -------
    callable
    """
    n = len(call.in_shapes)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in call.in_shapes]
    req = call.req[0]

    def run(*args):
        out, acc = args[n], args[n + 1]
        if req == REQ_NULL:
            return
        begin(acc)
        for i in range(n):
            add_array(args[i].reshape(sizes[i]), acc, i)
        finish(acc, out, req)
    return run
