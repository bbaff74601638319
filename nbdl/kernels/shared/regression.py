"""The regression outputs' codes, scales and views, shared by the CPU and CUDA kernels."""
import numpy as np


NORM_NULL, NORM_BATCH, NORM_VALID = 0, 1, 2
NORM_CODES = {"null": NORM_NULL, "batch": NORM_BATCH, "valid": NORM_VALID}


def softmax_output_views(attrs, dshape):
    """``(rows, classes, spatial)`` for the softmax of SoftmaxOutput; the
    label (class indices) is then ``(rows, spatial)``."""
    size = int(np.prod(dshape, dtype=np.int64))
    if attrs["multi_output"]:
        n, k = dshape[0], dshape[1]
        return (n, k, size // (n * k) if n * k else int(np.prod(dshape[2:], dtype=np.int64)))
    if attrs["preserve_shape"]:
        c = dshape[-1]
        return (size // c if c else int(np.prod(dshape[:-1], dtype=np.int64)), c, 1)
    n = dshape[0]
    return (n, size // n if n else int(np.prod(dshape[1:], dtype=np.int64)), 1)


def softmax_output_backward_plan(call):
    """What both devices need: (probability labels?, views, scalars)."""
    a = call.attrs
    oshape, lshape = tuple(call.in_shapes[0]), tuple(call.in_shapes[1])
    use_og = a["out_grad"]
    if lshape == oshape:
        n = int(np.prod(oshape, dtype=np.int64))
        views = [(n,)] * (4 if use_og else 3) + [None]
        return True, views, (float(a["grad_scale"]), call.req[0])
    rows, c, sp = softmax_output_views(a, oshape)
    norm = NORM_CODES[a["normalization"]]
    # MXNet divides multi_output gradients by the spatial size too, except
    # under 'valid' normalisation (there the count already covers it)
    scale_base = float(a["grad_scale"]) / (sp if norm != NORM_VALID else 1)
    full = (rows, c, sp)
    views = [full, (rows, sp)] + ([full] if use_og else []) + [full, None]
    scalars = (scale_base, float(a["smooth_alpha"]), int(a["ignore_label"]),
               int(bool(a["use_ignore"])), norm, call.req[0])
    return False, views, scalars


KIND_LINEAR, KIND_LOGISTIC, KIND_MAE = 0, 1, 2


def regression_scale(call):
    """grad_scale / num_output, num_output = label.size / label.shape[0]."""
    lshape = call.in_shapes[1]
    lsize = int(np.prod(lshape, dtype=np.int64))
    per_row = lsize // lshape[0] if len(lshape) and lshape[0] else 1
    return float(call.attrs["grad_scale"]) / max(per_row, 1)


def kind_prepares(prepare_forward, prepare_backward):
    """The regression outputs' prepares, each a device's
    ``prepare_forward(call, kind)`` / ``prepare_backward(call, kind)`` with
    its kind code bound.

    Parameters
    ----------
    prepare_forward, prepare_backward : callable
        The device's prepares taking ``(call, kind)``.

    Returns
    -------
    tuple
        ``prepare_{linear,logistic,mae}_forward`` then
        ``prepare_{linear,logistic,mae}_backward`` (the names the op table
        gives them).
    """
    out = []
    for way, prep in (("forward", prepare_forward), ("backward", prepare_backward)):
        for name, kind in (("linear", KIND_LINEAR), ("logistic", KIND_LOGISTIC),
                           ("mae", KIND_MAE)):
            def fn(call, _prep=prep, _kind=kind):
                return _prep(call, _kind)
            fn.__name__ = fn.__qualname__ = f"prepare_{name}_{way}"
            out.append(fn)
    return tuple(out)
