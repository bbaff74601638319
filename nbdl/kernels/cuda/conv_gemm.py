"""Convolution and Deconvolution on the GPU as im2col + GEMM (MXNet's road
before cuDNN), the GEMMs through ``matrix.py``'s launcher (cuBLAS on a real
GPU with CuPy, the tiled kernel otherwise).

Views as ``convolution.py``'s: ``img (N*G, Cg, D, H, W)`` (item ``n*G + g``),
``cols (N*G, Fg, OD, OH, OW)``, ``w (G, Fg, CgK)`` with ``CgK = Cg*KD*KH*KW``
and ``P = OD*OH*OW``.  Per group and per chunk of ``B`` images (as many as
fit ``SCRATCH_BYTES`` of the two planned scratch matrices):

- towards cols (Convolution's forward, Deconvolution's data gradient):
  ``col (CgK, B*P) = im2col(img)``; ``tmp (Fg, B*P) = w[g] . col``; cols from tmp;
- towards img (Convolution's data gradient, Deconvolution's forward):
  ``tmp = cols``; ``col = w[g]^T . tmp``; ``img = col2im(col)`` (a gather: no atomics);
- the weight gradient: ``col = im2col(img)``; ``tmp = cols``;
  ``dw[g] (+)= tmp . col^T`` (``beta`` accumulates the chunks).

Each chunk is one GEMM with ``B*P`` columns, so a layer takes a few launches
per chunk instead of one per image.
"""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_WRITE
from ._launch import launcher
from .im2col import taps_sum
from .matrix import gemm_launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

SCRATCH_BYTES = 1 << 28    # the col and tmp scratch of one chunk, at most (256 MiB)


def chunk(geom, dtype):
    """Images per chunk: the most whose two scratch matrices fit ``SCRATCH_BYTES``."""
    per_image = (geom["ck"] + geom["cols"][1]) * geom["P"] * np.dtype(dtype).itemsize
    return max(1, min(geom["N"], SCRATCH_BYTES // max(per_image, 1)))


def scratch(geom, dtype):
    """``[(shape, dtype)]`` of the two flat scratch buffers (col, tmp) of one chunk."""
    b = chunk(geom, dtype)
    return [((geom["ck"] * b * geom["P"],), dtype), ((geom["cols"][1] * b * geom["P"],), dtype)]


@cuda.jit
def _im2col(img, col, n0, g, g_n, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
            od_, oh_, ow_):
    """col[k, b, q] = the image of item (n0+b)*G + g at tap k of output position q (0 in padding)."""
    ck, nb, pp = col.shape
    d_n, h_n, w_n = img.shape[2], img.shape[3], img.shape[4]
    kk = kd * kh * kw
    for t in range(cuda.grid(1), ck * nb * pp, cuda.gridsize(1)):
        q = t % pp
        r = t // pp
        b = r % nb
        k = r // nb
        c = k // kk
        tap = k - c * kk
        e = tap % kw
        bb = (tap // kw) % kh
        a = tap // (kw * kh)
        z = (q // (ow_ * oh_)) * sd - pd + a * dd
        y = ((q // ow_) % oh_) * sh - ph + bb * dh
        x = (q % ow_) * sw - pw + e * dw
        if 0 <= z < d_n and 0 <= y < h_n and 0 <= x < w_n:
            col[k, b, q] = img[(n0 + b) * g_n + g, c, z, y, x]
        else:
            col[k, b, q] = 0


@cuda.jit
def _col2im(col, img, bias, n0, g, g_n, has_bias, req, kd, kh, kw, sd, sh, sw, pd, ph, pw,
            dd, dh, dw, od_, oh_, ow_):
    """img[(n0+b)*G + g] (=|+=) the sum of the taps of col that land on each element (+ bias)."""
    ck, nb, pp = col.shape
    cg, d_n, h_n, w_n = img.shape[1], img.shape[2], img.shape[3], img.shape[4]
    kk = kd * kh * kw
    for t in range(cuda.grid(1), nb * cg * d_n * h_n * w_n, cuda.gridsize(1)):
        x = t % w_n
        y = (t // w_n) % h_n
        z = (t // (w_n * h_n)) % d_n
        c = (t // (w_n * h_n * d_n)) % cg
        b = t // (w_n * h_n * d_n * cg)
        acc = img.dtype.type(0)
        if has_bias:
            acc = bias[g * cg + c]
        acc = taps_sum(col[:, b, :], c * kk, z, y, x, od_, oh_, ow_, kd, kh, kw, sd, sh, sw,
                       pd, ph, pw, dd, dh, dw, acc)
        i = (n0 + b) * g_n + g
        _put(img, (i, c, z, y, x), acc, req == REQ_ADD)


@cuda.jit
def _tmp_to_cols(tmp, cols, bias, n0, g, g_n, has_bias, req):
    """cols[(n0+b)*G + g, f] (=|+=) tmp[f, b] (+ bias), over the P positions."""
    fg, nb, pp = tmp.shape
    for t in range(cuda.grid(1), fg * nb * pp, cuda.gridsize(1)):
        q = t % pp
        b = (t // pp) % nb
        f = t // (pp * nb)
        v = tmp[f, b, q]
        if has_bias:
            v += bias[g * fg + f]
        i = (n0 + b) * g_n + g
        _put(cols, (i, f, q), v, req == REQ_ADD)


@cuda.jit
def _cols_to_tmp(cols, tmp, n0, g, g_n):
    """tmp[f, b] = cols[(n0+b)*G + g, f], over the P positions."""
    fg, nb, pp = tmp.shape
    for t in range(cuda.grid(1), fg * nb * pp, cuda.gridsize(1)):
        q = t % pp
        b = (t // pp) % nb
        f = t // (pp * nb)
        tmp[f, b, q] = cols[(n0 + b) * g_n + g, f, q]


class Road:
    """The im2col + GEMM launches of one convolution geometry (``convolution.geometry``)
    and dtype: ``to_cols``, ``to_img`` and ``weight_grad`` over flat scratch ``col``, ``tmp``."""

    def __init__(self, geom, dtype):
        self.g_n, self.n = geom["G"], geom["N"]
        self.ck, self.fg, self.p = geom["ck"], geom["cols"][1], geom["P"]
        self.cg = geom["img"][1]
        self.img_sp = geom["img"][2:]
        self.out3 = geom["cols"][2:]
        self.geo = tuple(int(v) for v in geom["k3"] + geom["s3"] + geom["p3"] + geom["d3"])
        self.b = chunk(geom, dtype)
        self.dtype = dtype
        self._gemms = {}
        self._launches = {}

    def _chunks(self):
        for n0 in range(0, self.n, self.b):
            yield n0, min(self.b, self.n - n0)

    def _gemm(self, m, n):
        key = (m, n)
        if key not in self._gemms:
            self._gemms[key] = gemm_launcher(self.dtype, 1, m, n)
        return self._gemms[key]

    def _launch(self, kernel, size):
        key = (kernel, size)
        if key not in self._launches:
            self._launches[key] = launcher(kernel, size)
        return self._launches[key]

    def _views(self, col, tmp, nb):
        return (col[:self.ck * nb * self.p].reshape(self.ck, nb, self.p),
                tmp[:self.fg * nb * self.p].reshape(self.fg, nb, self.p))

    def to_cols(self, img, w, bias, cols, has_bias, req, col, tmp):
        """cols (=|+=) w . im2col(img) (+ bias): Convolution's forward."""
        cols = cols.reshape(cols.shape[0], self.fg, self.p)
        for g in range(self.g_n):
            for n0, nb in self._chunks():
                c3, t3 = self._views(col, tmp, nb)
                self._launch(_im2col, c3.size)(img, c3, n0, g, self.g_n, *self.geo, *self.out3)
                self._gemm(self.fg, nb * self.p)(w[g:g + 1], c3.reshape(1, self.ck, nb * self.p),
                                                  t3.reshape(1, self.fg, nb * self.p), None,
                                                  0, 0, 0, REQ_WRITE)
                self._launch(_tmp_to_cols, t3.size)(t3, cols, bias, n0, g, self.g_n,
                                                    has_bias, req)

    def to_img(self, cols, w, bias, img, has_bias, req, col, tmp):
        """img (=|+=) col2im(w^T . cols) (+ bias): Convolution's data gradient."""
        cols = cols.reshape(cols.shape[0], self.fg, self.p)
        for g in range(self.g_n):
            for n0, nb in self._chunks():
                c3, t3 = self._views(col, tmp, nb)
                self._launch(_cols_to_tmp, t3.size)(cols, t3, n0, g, self.g_n)
                self._gemm(self.ck, nb * self.p)(w[g:g + 1], t3.reshape(1, self.fg, nb * self.p),
                                                  c3.reshape(1, self.ck, nb * self.p), None,
                                                  1, 0, 0, REQ_WRITE)
                self._launch(_col2im, nb * self.cg * int(np.prod(self.img_sp)))(
                    c3, img, bias, n0, g, self.g_n, has_bias, req, *self.geo, *self.out3)

    def weight_grad(self, img, cols, dw, req, col, tmp):
        """dw[g] (=|+=) sum over images of cols . im2col(img)^T."""
        cols = cols.reshape(cols.shape[0], self.fg, self.p)
        for g in range(self.g_n):
            r = req
            for n0, nb in self._chunks():
                c3, t3 = self._views(col, tmp, nb)
                self._launch(_im2col, c3.size)(img, c3, n0, g, self.g_n, *self.geo, *self.out3)
                self._launch(_cols_to_tmp, t3.size)(cols, t3, n0, g, self.g_n)
                self._gemm(self.fg, self.ck)(t3.reshape(1, self.fg, nb * self.p),
                                             c3.reshape(1, self.ck, nb * self.p), dw[g:g + 1],
                                             None, 0, 1, 0, r)
                r = REQ_ADD                        # later chunks add to the first's


def zero_sized(geom):
    """Whether the road has nothing to multiply (an empty dimension)."""
    return geom["N"] * geom["ck"] * geom["cols"][1] * geom["P"] == 0

