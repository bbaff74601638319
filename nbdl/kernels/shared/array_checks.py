"""_contrib_allclose's element test, written once for both devices (plain
Python: compiled by ``njit`` in ``kernels.cpu.array_checks``, by
``cuda.jit(device=True)`` in ``kernels.cuda.array_checks``)."""


def py_close(x, y, rtol, atol, equal_nan):
    """Whether ``x`` is close to ``y`` as numpy's allclose says (NaN equal to
    NaN only with ``equal_nan``)."""
    xn = x != x
    yn = y != y
    if xn or yn:
        return equal_nan and xn == yn
    return x == y or abs(x - y) <= atol + rtol * abs(y)
