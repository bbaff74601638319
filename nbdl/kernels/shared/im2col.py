"""im2col / col2im geometry, shared by the CPU and CUDA kernels: every
spatial rank is handled as 3-D (missing leading axes have size 1, kernel 1,
stride 1, pad 0, dilation 1), the image as (N*C, D*H*W) and the columns as
(N*C, K, P), K the kernel taps and P the blocks."""
import math

import numpy as np

from ...ops.im2col import blocks, slide_params


def slide_geometry(opname, attrs, image_shape):
    """(planes, K, P, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW)
    for an image of shape (N, C, *spatial)."""
    k, s, d, p = slide_params(opname, attrs)
    image_shape = tuple(int(v) for v in image_shape)
    spatial = image_shape[2:]
    out = blocks(opname, attrs, spatial)
    pad = 3 - len(k)
    sp3 = (1,) * pad + spatial
    out3 = (1,) * pad + tuple(out)
    k3 = (1,) * pad + tuple(k)
    s3 = (1,) * pad + tuple(s)
    p3 = (0,) * pad + tuple(p)
    d3 = (1,) * pad + tuple(d)
    planes = image_shape[0] * image_shape[1]
    return (planes, math.prod(k3), math.prod(out3)) + sp3 + out3 + k3 + s3 + p3 + d3


def views(geo):
    """(image view, columns view) of ``slide_geometry``'s result."""
    planes, kk, pp, dn, hn, wn = geo[:6]
    return (planes, dn * hn * wn), (planes, kk, pp)


def table_temp(geo):
    """The CPU kernels' scratch: Convolution's int32 im2col table in its
    ELEMENTS layout (``kernels/cpu/conv_im2col``: a 3-entry head, taps,
    shifts and a spare row of K, then K*P offsets)."""
    return [((3 + 3 * geo[1] + geo[1] * geo[2],), np.dtype(np.int32))]
