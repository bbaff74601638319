"""Pad's mode codes and layout, shared by the CPU and CUDA kernels."""
from ...ops.pad_resize import check_pad


MODES = {"constant": 0, "edge": 1, "reflect": 2}


def pad_layout(attrs, data_shape):
    """(data view, padded view, (pd, ph, pw), mode code)."""
    data_shape = tuple(data_shape)
    pairs = check_pad("Pad", attrs, data_shape, None)
    if len(data_shape) == 4:
        data_shape = data_shape[:2] + (1,) + data_shape[2:]
        pairs = pairs[:2] + [(0, 0)] + pairs[2:]
    padded = tuple(d + b + a for d, (b, a) in zip(data_shape, pairs))
    view = (data_shape[0] * data_shape[1],) + data_shape[2:]
    pview = (padded[0] * padded[1],) + padded[2:]
    return view, pview, tuple(p[0] for p in pairs[2:]), MODES[attrs["mode"]]
