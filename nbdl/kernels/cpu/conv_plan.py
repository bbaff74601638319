"""Which variant the CPU convolution kernels run and the scratch it needs
(prepare time, plain Python; ``convolution`` holds the kernels).

Variants (``mode``, picked at prepare time by ``plan``; BLAS is always held
to one thread inside the parallel ones: numba's threads and BLAS's must not
nest, and BLAS's own threads stall badly on a busy machine):

- ``SERIAL``: small convolutions, or one thread; BLAS held to one thread
  when a block's GEMM is small (``_blas_threads.hold_for``);
- ``CHUNKS``: enough columns for every thread: a ``prange`` over ``nt``
  contiguous chunks of samples, each a serial loop over its blocks with
  scratch rows of its own, weight-gradient partial sums per chunk reduced at
  the end.  A chunk's samples are fixed, so results do not depend on
  scheduling.
- ``TILES`` (Convolution's forward only): few images, not tiny ones
  (batch 1 at 14x14 and up, say): a ``prange`` over ``nt`` contiguous runs of the
  (image, column tile) pairs, each tile's im2col and GEMM on one thread
  while its columns are in cache (``SPLIT`` would build the whole image's
  columns, then have every thread read all of them); also 1x1 direct
  convolutions of few filters (each thread a GEMM of all of them over its
  columns instead of a few rows over all columns).
- ``SPLIT``: few columns (small batches, tiny images): a block at a time,
  im2col/gather split over (sample, channel) pairs, then each GEMM split
  over ``nt`` slices of its rows (output channels; input channels for the
  data product, each slice followed by its col2im or scatter), so the
  weight gradient needs no reduction.

Scratch from the planner (``scratch``, sized for the kept taps): the column
block ``(rows, CK*bs*P)`` (or ``CK*tile``; none for a one-image 1x1 direct
block), the cols-side block ``(rows, Fg*bs*P)`` (only when ``bs > 1``),
backward the partial sums ``(nt, G, Fg, CK)`` (only ``CHUNKS``), the int32
im2col table (``conv_im2col.table_size``), and the compacted weights (and
backward their gradient) when taps were left out; ``rows`` is ``nt`` for
``CHUNKS`` and ``TILES``, else 1.
"""
import math
from functools import partial

import numpy as np

from ...ops.convolution import geometry
from ...ops.registry import REQ_NULL
from ._blas_threads import BLAS_THREAD_CONTROL
from ._parallel import threads as _threads, use_parallel
from .conv_depthwise import scratch_size
from .conv_im2col import table_size
from .conv_winograd import tiles_of, winograd_scratch

SERIAL, CHUNKS, SPLIT, TILES = 0, 1, 2, 3


# -- plan and scratch (prepare time) ---------------------------------------------------------

def is_direct(geom):
    """1x1 kernel, stride 1, no pad: the image is its own column matrix."""
    return int(geom["k3"] == (1, 1, 1) and geom["s3"] == (1, 1, 1) and geom["p3"] == (0, 0, 0))


def is_depthwise(geom):
    """A depthwise convolution (one input channel a group, several groups):
    its forward runs direct loops (``conv_depthwise``), no scratch but the
    epilogue's."""
    return geom["G"] > 1 and geom["img"][1] == 1


def depthwise_threads(call):
    """Threads (scratch rows) of a depthwise forward: its parallel kernel's,
    or 1 for the serial one.  The work counted is the multiply-adds (outputs
    times kernel taps), not the outputs: an output costs several
    nanoseconds, and MobileNet's layers of 7x7 and 14x14 maps (25-100
    thousand outputs, 0.15-0.25 ms) ran serially under the elementwise
    kernels' threshold."""
    work = math.prod(call.out_shapes[0]) * math.prod(call.attrs["kernel"])
    return _threads() if use_parallel(work) else 1


def epilogue_temp(call, dtype):
    """The epilogue's per-channel scale and shift, ``(2, F)`` when there is a
    bias or a folded BatchNorm (``(2, 0)`` otherwise)."""
    a = call.attrs
    affine = not a["no_bias"] or a.get("with_bn", False)
    return ((2, a["num_filter"] if affine else 0), dtype)


def plan(geom, itemsize=4, forward=False):
    """``(mode, nt, bs, tile)`` for a convolution of geometry ``geom`` (see the
    module docstring): ``SERIAL`` below ``NBDL_CONV_PARALLEL_MIN_FLOPS`` (or
    on one thread, or when BLAS's threads cannot be held), ``CHUNKS`` when
    every thread gets at least ``NBDL_CONV_BLOCK_COLS`` columns of its own
    samples, else (``forward``) ``TILES`` when the images have an eighth of
    that a thread and each image a quarter of it (a tile of a tiny image is
    the image: ResNet-18's 2x2 layers at batch 32 ran 32 GEMMs of 4 columns,
    2.5 ms against SPLIT's 1.3), or for 1x1 direct convolutions when they
    have few filters (``_tiles_pay``), else ``SPLIT``.
    (Batch 1, 2 threads: TILES took 128->128 3x3 at 28x28 from 1.53-1.71 to
    1.33-1.35 ms, 256 channels at 14x14 from 1.39-1.46 to 1.28; at 7x7 they
    were level.)
    ``bs``: samples a block, to make blocks of about ``NBDL_CONV_BLOCK_COLS``
    columns (a quarter of that for 1x1 direct convolutions; ``SPLIT``: the
    whole batch), within a chunk and within ``NBDL_CONV_BLOCK_BYTES`` of
    columns.
    ``tile``: output positions a block; an image of more than twice
    ``NBDL_CONV_BLOCK_COLS`` is cut into tiles of about that many (``SERIAL``
    and ``CHUNKS``, unless 1x1 direct: the columns of a tile stay in cache
    until its GEMM)."""
    from ... import config
    threads = _threads()
    n, p = geom["N"], max(geom["P"], 1)
    g_n, fg, ck = geom["w"]
    flops = 2 * n * g_n * fg * ck * p
    target = max(1, config.conv_block_cols())
    by_bytes = max(1, config.conv_block_bytes() // max(1, ck * p * itemsize))
    # a 1x1 direct convolution multiplies the images in place; a block of
    # several costs copies in and out, worth it only for the smallest images
    per_block = -(-(max(1, target // 4) if is_direct(geom) else target) // p)
    if threads < 2 or not BLAS_THREAD_CONTROL or flops < config.conv_parallel_min_flops():
        mode, nt, bs = SERIAL, 1, min(n, per_block)
    elif n >= threads and n * p >= threads * config.conv_chunk_min_cols():
        mode, nt = CHUNKS, threads
        bs = min(-(-n // nt), per_block)
    elif forward and _tiles_pay(geom, n, p, target, threads):
        return TILES, threads, 1, _even_tile(n, p, target, threads)
    else:
        mode, nt, bs = SPLIT, threads, n
    bs = max(1, min(bs, by_bytes))
    tile = p
    if mode != SPLIT and bs == 1 and p > 2 * target and not is_direct(geom):
        tiles = -(-p // target)
        tile = -(-p // tiles)
    return mode, nt, bs, tile


# 1x1 direct convolutions run (image, tile) pairs (``TILES``) when SPLIT would
# give each thread a GEMM of few rows (filters) and there are this many
# columns a thread: SqueezeNet 1.1 at batch 1 (squeeze layers of 16-64
# filters) 2.97-3.03 -> 2.80-2.90 ms, MobileNet b1 level to 0.92, ResNet-50
# b1 level; with every 1x1 layer (weights of up to 2 MB read by both
# threads) ResNet-50 b1 ran 3% and MobileNet 0-6% slower (perf/README.md,
# tenth session)
DIRECT_TILES_MAX_FILTERS = 64
DIRECT_TILES_MIN_COLS = 64


def _tiles_pay(geom, n, p, target, threads):
    """Whether a forward's (image, tile) pairs (``TILES``) beat ``SPLIT``:
    im2col convolutions of images of a quarter of ``target`` positions and
    up (each tile's columns stay in cache until its GEMM), 1x1 direct ones
    of at most ``DIRECT_TILES_MAX_FILTERS`` filters a group."""
    if is_direct(geom):
        return (geom["w"][1] <= DIRECT_TILES_MAX_FILTERS
                and n * p >= threads * DIRECT_TILES_MIN_COLS)
    return p >= max(1, target // 4) and n * p >= threads * max(1, target // 8)


def _even_tile(n, p, target, threads):
    """Columns a tile for ``TILES``: about ``target``, and as many tiles an
    image as make the (image, tile) pairs a multiple of ``threads`` (7 tiles
    on 2 threads would leave one idle for a seventh of the time)."""
    tiles = -(-p // target)
    while (n * tiles) % threads and tiles < p:
        tiles += 1
    return -(-p // tiles)


def kept_taps(geom):
    """Kernel taps that read inside the image for some output position (all
    of them but for tiny padded images); ``_make_table``'s rule."""
    def axis(n_out, stride, off, size):
        lo = 0 if off >= 0 else (-off + stride - 1) // stride
        return lo < n_out and lo * stride + off < size
    (kd, kh, kw), (sd, sh, sw) = geom["k3"], geom["s3"]
    (pd, ph, pw), (dd, dh, dw) = geom["p3"], geom["d3"]
    (d_n, h_n, w_n), (od, oh, ow) = geom["img"][2:], geom["cols"][2:]
    return [(a * kh + b) * kw + e for a in range(kd) for b in range(kh) for e in range(kw)
            if axis(od, sd, a * dd - pd, d_n) and axis(oh, sh, b * dh - ph, h_n)
            and axis(ow, sw, e * dw - pw, w_n)]


def scratch(geom, the_plan, backward, need_weight, dtype):
    """``[(shape, dtype)]`` of the kernels' scratch for ``plan``'s choice:
    ``[col, buf, table, wsc]`` forward, ``[col, part, buf, table, wsc]``
    backward (zero-sized where the variant does not use one).  ``wsc``
    holds the weights compacted to the kept taps (and backward their
    gradient) when some taps read only padding; the column block, the
    partial sums and the table are sized for the kept taps."""
    mode, nt, bs, tile = the_plan
    g_n, fg, ck = geom["w"]
    p = geom["P"]
    k = int(np.prod(geom["k3"]))
    rows = nt if mode in (CHUNKS, TILES) else 1
    direct = is_direct(geom)
    kv = k if direct else len(kept_taps(geom))
    ckv = ck // k * kv
    col = ((rows, 0 if (direct and bs == 1) else ckv * (bs * p if tile == p else tile)), dtype)
    buf = ((rows, fg * bs * p if bs > 1 else 0), dtype)
    tbl = ((0 if direct else table_size(kv, geom["cols"][2:]),), np.int32)
    wsc = ((0 if kv == k else (2 if backward else 1), g_n, fg, ckv), dtype)
    if not backward:
        return [col, buf, tbl, wsc]
    part = ((nt if (mode == CHUNKS and need_weight) else 0, g_n, fg, ckv), dtype)
    return [col, part, buf, tbl, wsc]


# -- Winograd F(2x2, 3x3) (prepare time) ----------------------------------------------------

# Measured on 2 cores (AVX-512, OpenBLAS), one bound layer (+ ReLU) against
# im2col + GEMM, Winograd / im2col (perf/README.md, ninth session): 64
# channels at 56x56 0.56-0.74 (batch 1 and 16), 128 at 28x28 0.73-0.98, 256
# at 14x14 0.72-0.94 at batch 16 but 1.05-1.9 at batch 1 (49 tiles: the
# weights' transform, 16 x F x C values a call, and products of few
# columns), 512 at 7x7 1.5-1.6 at batch 16 and 32 (each of the 16 products
# reads a 1 MB matrix for a few tiles), 16 -> 64 channels at 55x55 0.95 /
# 1.06 (b1 / b16), 32 -> 128 at 27x27 0.92.  F(4x4, 3x3) (``_wino_tile``)
# at 56x56 and 28x28: 0.48-0.64.  Runs of several whole images a work item
# (each product's weight matrix read once for all of them) left 512 at 7x7
# at 0.99-1.02 (batch 16 and 32) and 256 at 14x14 at 0.72: not kept.
# Few tiles a thread run the batch in three phases (``winograd_plan``; the
# products split by planes, each read by one thread, with all the tiles'
# columns): 256 at 14x14, batch 1, 1.05 -> 0.91-0.92 (128 channels 0.82, 64
# 0.93; batch 2 0.78, 4 0.70), 128 at 28x28 0.64 -> 0.59, 64 at 56x56 0.51 ->
# 0.47, 512 at 7x7 batch 16 1.43 -> 0.97 (left out: no gain), batch 1 3.2 ->
# 2.2 (16 MB of transformed weights a call).
WINO_MIN_TILES = 49           # tiles (2x2 outputs) a call: batch 1 at 14x14
WINO_MIN_CHANNELS = 32        # input channels (the products' contraction)
WINO_MIN_FILTERS = 16         # output channels
WINO_MAX_CHANNELS = 256       # input and output channels
WINO_BAND_BYTES = 3 << 20     # a work item's transformed input and products, at most
WINO_PHASES_SLOTS = 128       # tiles a thread below which the batch runs in phases
WINO_PHASES_BYTES = 32 << 20  # ... if its transformed input and products fit


def winograd_plan(call, geom):
    """``(nt, band, phases, tm)`` when ``call`` (Convolution's or the fused convolution's
    forward) runs ``conv_winograd``, else None: an inference call of a 2-D
    3x3 kernel, stride 1, pad 1, no dilation, one group, float32 or float64,
    ``WINO_MIN_CHANNELS`` to ``WINO_MAX_CHANNELS`` input channels,
    ``WINO_MIN_FILTERS`` to ``WINO_MAX_CHANNELS`` output channels and
    ``WINO_MIN_TILES`` tiles in the batch, unless ``NBDL_CONV_WINOGRAD=0``
    (the limits: the measurements above).  ``nt`` threads (1: the serial
    kernel, BLAS's own threads), ``band`` tile rows a work item
    (``_wino_band``), ``tm`` the output tile (``_wino_tile``), ``phases`` 1
    when the batch has fewer than ``WINO_PHASES_SLOTS`` tile slots a thread
    (and its transformed input and products fit ``WINO_PHASES_BYTES``): it
    then runs in three parallel phases (``conv_winograd.wino_forward``), the
    returned ``band`` the image's tile rows.

    Inference only, and only in bound graphs: ``_nbdl_fused_conv`` (only
    graphs bound without gradients have it: ``nbdl.graph.fuse``; a bound
    graph's first runs use the launch's im2col fallback until the Winograd
    kernels are compiled).  A plain ``Convolution`` keeps im2col: a bound
    graph prepares its forward for training and runs that launch in both
    modes (so training compiles nothing more: issue 10's first-step
    figures), and an eager or interpreted call, which has no fallback,
    would compile the Winograd kernels at once (a fresh machine's first
    eager ResNet-18 forward: 15 -> 28 s)."""
    from ... import config
    if call.op.name != "_nbdl_fused_conv":
        return None
    if not config.conv_winograd():
        return None
    dt = call.out_dtypes[0] if call.out_dtypes and call.out_dtypes[0] is not None else "float32"
    if np.dtype(dt) not in (np.float32, np.float64):
        return None
    if (geom["G"] != 1 or geom["k3"] != (1, 3, 3) or geom["s3"] != (1, 1, 1)
            or geom["p3"] != (0, 1, 1) or geom["d3"] != (1, 1, 1) or geom["img"][2] != 1):
        return None
    n, n_c, _, h, w = geom["img"]
    n_f = geom["w"][1]
    th, tw = tiles_of(h, w)
    if (n_c < WINO_MIN_CHANNELS or n_f < WINO_MIN_FILTERS or max(n_c, n_f) > WINO_MAX_CHANNELS
            or n * th * tw < WINO_MIN_TILES):
        return None
    threads = _threads()
    nt = threads if threads > 1 and BLAS_THREAD_CONTROL else 1
    tm = _wino_tile(h, w)
    th, tw = tiles_of(h, w, tm)
    itemsize = np.dtype(dt).itemsize
    slots = n * th * (tw + 1)
    if (nt > 1 and slots < WINO_PHASES_SLOTS * nt
            and (tm + 2) ** 2 * (n_c + n_f) * slots * itemsize <= WINO_PHASES_BYTES):
        return nt, th, 1, tm
    return nt, _wino_band(n, th, tw, nt, n_c, n_f, itemsize, tm), 0, tm


WINO_F4_MIN_SIDE = 28         # output sides from which F(4x4, 3x3) runs


def _wino_tile(h, w):
    """The output tile: 4 (F(4x4, 3x3): 36 products for 16 outputs, 2.25 a
    value against F(2x2)'s 4) for maps of ``WINO_F4_MIN_SIDE`` and up, else
    2 (a 14x14 map is 4x4 tiles of 4 with a sixth of them padding, and
    few tiles to share each product's 36 weight matrices: F(4x4) 1.0-1.5x
    im2col's time there, F(2x2) 0.7-1.04x)."""
    return 4 if min(h, w) >= WINO_F4_MIN_SIDE else 2


def _band_range(th, tw, n_c, n_f, itemsize, tm=2):
    """The bands ``_wino_band`` chooses from: 1 to the most tile rows whose
    transformed input and products (``(tm + 2)^2 (C + F)`` values a tile)
    fit in ``WINO_BAND_BYTES`` (at least one row, at most the image's
    ``th``)."""
    per_row = (tm + 2) ** 2 * (n_c + n_f) * (tw + 1) * itemsize
    return 1, max(1, min(th, WINO_BAND_BYTES // per_row))


def _wino_band(n, th, tw, nt, n_c, n_f, itemsize=4, tm=2):
    """Tile rows a work item: of the bands in ``_band_range``, the one whose
    (image, band) items, split into ``nt`` contiguous runs, give the busiest
    thread the fewest tile rows; of those, the largest (its products have
    the most columns).  (One image of 7 tile rows on 2 threads is two
    items, not one a thread had alone.)"""
    lo, hi = _band_range(th, tw, n_c, n_f, itemsize, tm)
    best = None
    for band in range(lo, hi + 1):
        per = -(-th // band)
        rows = [min(band, th - b * band) for b in range(per)] * n
        worst = max(sum(rows[len(rows) * t // nt:len(rows) * (t + 1) // nt]) for t in range(nt))
        if best is None or worst <= best[0]:
            best = (worst, band)
    return best[1]


def winograd_temps(geom, the_plan, dtype):
    """``[u, v, m, rb]``: the transformed weights (shared), each thread's
    transformed input, products and row buffer (``conv_winograd``)."""
    nt, band, phases, tm = the_plan
    n_c, w = geom["img"][1], geom["img"][4]
    images = geom["img"][0] if phases else 1
    nu, nv, nm, nr = winograd_scratch(n_c, geom["w"][1], w, band, nt, tm, images)
    rows = 1 if phases else nt
    a2 = (tm + 2) ** 2
    return [((a2, nu // a2), dtype), ((rows, nv), dtype), ((rows, nm), dtype), ((nt, nr), dtype)]


# -- prepare ----------------------------------------------------------------------------

def _geom_scalars(geom):
    return tuple(int(v) for v in geom["k3"] + geom["s3"] + geom["p3"] + geom["d3"])


def cpu_plan(call, geom, forward=False):
    """``(mode, nt, bs, tile)`` of these kernels for ``call`` (``plan`` for its
    dtype; ``forward``: Convolution's forward, which alone runs ``TILES``);
    ``prepare`` and the temp rules both ask this, so the scratch matches the
    variant."""
    dt = call.out_dtypes[0] if call.out_dtypes and call.out_dtypes[0] is not None else "float32"
    return plan(geom, np.dtype(dt).itemsize, forward)


def _temps(call, transposed, backward):
    """``[col, buf, table, wsc]`` forward, ``[col, part, buf, table, wsc]``
    backward: the im2col column block (Deconvolution forward: the GEMM result
    before col2im), backward the per-chunk weight-gradient partial sums, the
    cols-side block (gathered or GEMM result), the int32 im2col table, and the
    weights (and gradient) compacted to the taps that read the image;
    Convolution's forward (and the fused one's) adds the epilogue's scale and
    shift (and, when it runs Winograd, that kernel's ``winograd_temps``
    after them), and a depthwise one needs nothing else."""
    geom = geometry(call.attrs, call.in_shapes[1 if backward else 0], transposed)
    dtype = call.out_dtypes[0]
    if not transposed and not backward:
        st = epilogue_temp(call, dtype)
        if is_depthwise(geom):
            return [st, ((depthwise_threads(call), scratch_size(geom)), dtype)]
        im2col = scratch(geom, cpu_plan(call, geom, True), False, False, dtype) + [st]
        wino = winograd_plan(call, geom)
        if wino is not None:       # and im2col's, for the launch's fallback
            return im2col + winograd_temps(geom, wino, dtype)
        return im2col
    return scratch(geom, cpu_plan(call, geom), backward, backward and call.req[1] != REQ_NULL,
                   dtype)


temp_convolution = partial(_temps, transposed=False, backward=False)
temp_deconvolution = partial(_temps, transposed=True, backward=False)
temp_convolution_backward = partial(_temps, transposed=False, backward=True)
temp_deconvolution_backward = partial(_temps, transposed=True, backward=True)


__all__ = ["plan", "scratch", "kept_taps", "is_direct", "is_depthwise", "epilogue_temp",
           "depthwise_threads", "cpu_plan", "winograd_plan", "winograd_temps", "SERIAL", "CHUNKS", "SPLIT", "TILES",
           "temp_convolution", "temp_deconvolution", "temp_convolution_backward",
           "temp_deconvolution_backward"]
