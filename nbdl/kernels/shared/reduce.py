"""argmax / argmin's comparison, written once for both devices (plain
Python: compiled by ``njit`` in ``kernels.cpu.reduce``, by
``cuda.jit(device=True)`` in ``kernels.cuda.reduce``)."""


def py_better(v, best, is_min):
    """Whether ``v`` replaces the running ``best`` of argmin (``is_min``) or
    argmax: strictly smaller (larger), or a NaN over a number (the first of
    ties, and the first NaN, win)."""
    if is_min:
        return v < best or (v != v and best == best)
    return v > best or (v != v and best == best)
