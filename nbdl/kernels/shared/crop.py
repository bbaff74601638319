"""Crop's views and window offsets, shared by the CPU and CUDA kernels."""
from ...ops.crop import crop_offsets


def crop_plan(attrs, dshape, oshape):
    """(data view (N*C, H, W), output view (N*C, h, w), y offset, x offset)."""
    dshape = tuple(int(d) for d in dshape)
    oshape = tuple(int(d) for d in oshape)
    oy, ox = crop_offsets(attrs, dshape, oshape)
    p = dshape[0] * dshape[1]
    return (p,) + dshape[2:], (p,) + oshape[2:], oy, ox
