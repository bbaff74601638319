"""The FFT of ``_contrib_fft`` / ``_contrib_ifft`` (``register_jitable``
functions called from ``kernels.cpu.fft`` and ``kernels.cuda.fft``) and
their prepare-time layout.

``stockham`` transforms one row held as interleaved complex float64 in the
first half of a 4n-element scratch row (the second half is the other
buffer of the ping-pong): a self-sorting mixed-radix Stockham FFT whose
stages are the prime factors of n, smallest first.  A stage of radix R maps
element ``j + r * n / R`` of its input (r < R) to outputs ``(j // Ns) * Ns *
R + j % Ns + q * Ns`` (q < R), Ns the product of the earlier radices, with
twiddles ``exp(sign * 2 pi i * r * (j % Ns + q * Ns) / (Ns * R))`` made by
one sin/cos per output and a recurrence over r.
"""
import math

import numpy as np
from numba.extending import register_jitable

F64 = np.dtype(np.float64)


def rows_layout(shape, inverse):
    """(rows, n): the transforms of an input of ``shape`` and their length."""
    rows = 1
    for v in shape[:-1]:
        rows *= int(v)
    n = int(shape[-1]) // 2 if inverse else int(shape[-1])
    return rows, n


def temp_rows(call, inverse):
    """The scratch: two complex buffers (4n float64) per row."""
    rows, n = rows_layout(call.in_shapes[0], inverse)
    return [((rows, 4 * n), F64)]


@register_jitable
def smallest_factor(m):
    """The smallest prime factor of ``m`` >= 2."""
    if m % 2 == 0:
        return 2
    f = 3
    while f * f <= m:
        if m % f == 0:
            return f
        f += 2
    return m


@register_jitable
def stockham(buf, n, sign):
    """Transform the n complex values in ``buf[:2n]`` (``sign`` -1: forward,
    +1: unnormalised inverse); returns the offset (0 or 2n) of the result."""
    src = 0
    dst = 2 * n
    ns = 1
    m = n
    while m > 1:
        radix = smallest_factor(m)
        m //= radix
        span = n // radix
        for j in range(span):
            k = j % ns
            base = (j // ns) * ns * radix + k
            for q in range(radix):
                angle = sign * 2.0 * math.pi * (k + q * ns) / (ns * radix)
                wr = math.cos(angle)
                wi = math.sin(angle)
                pr = 1.0
                pi = 0.0
                ar = 0.0
                ai = 0.0
                for r in range(radix):
                    p = src + 2 * (j + r * span)
                    xr = buf[p]
                    xi = buf[p + 1]
                    ar += xr * pr - xi * pi
                    ai += xr * pi + xi * pr
                    t = pr * wr - pi * wi
                    pi = pr * wi + pi * wr
                    pr = t
                o = dst + 2 * (base + q * ns)
                buf[o] = ar
                buf[o + 1] = ai
        ns *= radix
        t = src
        src = dst
        dst = t
    return src


@register_jitable
def fft_row(x, out, buf, row, n, add):
    """Row ``row`` of fft: real ``x[row]`` -> interleaved ``out[row]``."""
    for i in range(n):
        buf[2 * i] = x[row, i]
        buf[2 * i + 1] = 0.0
    off = stockham(buf, n, -1.0)
    for i in range(2 * n):
        if add:
            out[row, i] += buf[off + i]
        else:
            out[row, i] = buf[off + i]


@register_jitable
def ifft_row(x, out, buf, row, n, add):
    """Row ``row`` of ifft: interleaved ``x[row]`` -> real part of the
    unnormalised inverse in ``out[row]``."""
    for i in range(2 * n):
        buf[i] = x[row, i]
    off = stockham(buf, n, 1.0)
    for i in range(n):
        if add:
            out[row, i] += buf[off + 2 * i]
        else:
            out[row, i] = buf[off + 2 * i]
