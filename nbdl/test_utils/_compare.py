"""Comparison helpers of ``nbdl.test_utils`` (MXNet 1.9.1's semantics)."""
import numpy as np
import numpy.testing as npt

from .. import testing as _testing
from ._tols import get_atol, get_rtol, get_tols


def _to_numpy(x):
    if isinstance(x, (int, float, complex, bool, np.generic)):
        return np.array(x)
    return _testing._np(x)


def same(a, b):
    """Whether two arrays have the same shape and elements.

    Parameters
    ----------
    a, b : numpy.ndarray or NDArray
    """
    return np.array_equal(_to_numpy(a), _to_numpy(b))


def _check_shapes(a, b, names=("a", "b")):
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg(
            [a, b], err_msg=f"{names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} "
                            f"are not equal"))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (numpy's
    ``allclose``), broadcasting unless ``use_broadcast=False``.

    Parameters
    ----------
    a, b : numpy.ndarray, NDArray or scalar
    rtol : float, optional
        Relative tolerance (None: 1e-5).
    atol : float, optional
        Absolute tolerance (None: 1e-20).
    equal_nan : bool
        NaNs in the same place count as equal.
    use_broadcast : bool
        When False, differing shapes raise ``AssertionError``.

    Returns
    -------
    bool
    """
    a, b = _to_numpy(a), _to_numpy(b)
    if not use_broadcast:
        _check_shapes(a, b)
    try:
        return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))
    except ValueError:   # shapes that do not broadcast
        return False


def _violation(a, b, rtol, atol):
    """|a-b| / tolerance per element (inf-safe: equal infs are 0)."""
    with np.errstate(invalid="ignore", over="ignore"):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = np.where(np.equal(a64, b64), 0.0, np.abs(a64 - b64))
        return diff / (atol + rtol * np.abs(b64) + 1e-20)


def _location(a, b, index, names, maximum=False):
    word = "maximum " if maximum else ""
    return (f"Location of {word}error: {tuple(int(i) for i in index)}, "
            f"{names[0]}={float(a[index]):.8f}, {names[1]}={float(b[index]):.8f}")


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise ``AssertionError`` unless ``a`` and ``b`` agree within tolerance.

    Parameters
    ----------
    a, b : numpy.ndarray, NDArray or scalar
        Compared elementwise after numpy broadcasting.
    rtol, atol : None, float or dict of dtype to float
        Relative and absolute tolerance; None picks the dtype's default
        (the larger of the two operands').
    names : tuple of two str
        How the message calls ``a`` and ``b``.
    equal_nan : bool
        NaNs in the same place count as equal.
    use_broadcast : bool
        When False, differing shapes fail.
    mismatches : tuple of two int
        How many mismatches to list, and how many to count before the
        message says "at least" (<= 0: count all).
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _to_numpy(a), _to_numpy(b)
    if not use_broadcast:
        _check_shapes(a, b, names)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        npt.assert_equal(a, b)
        return
    try:
        ab, bb = np.broadcast_arrays(a, b)
    except ValueError:
        raise AssertionError(f"{names[0]} of shape {a.shape} and {names[1]} of shape {b.shape} "
                             f"cannot be broadcast together") from None
    if np.allclose(ab, bb, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    viol = _violation(ab, bb, rtol, atol)
    close = np.isclose(ab, bb, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # worst first: NaN mismatches, then by violation (MXNet's argmax order)
    rank = np.where(close, -1.0, np.where(np.isnan(viol), np.inf, viol))
    order = np.argsort(-rank, axis=None, kind="stable")
    n_bad = int((~close).sum())
    if ab.ndim == 0:
        err = (f"Error {float(viol):f} exceeds tolerance rtol={rtol:e}, atol={atol:e}.\n")
    else:
        index = np.unravel_index(order[0], ab.shape)
        counted = n_bad
        degree = ""
        if mismatches[1] > 0 and n_bad > mismatches[1]:
            counted, degree = mismatches[1] + 1, "at least "
        err = (f"Error {float(viol[index]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
               f"(mismatch {degree}{100.0 * counted / ab.size:f}%).\n"
               f"{_location(ab, bb, index, names, maximum=True)}")
        worst = [np.unravel_index(k, ab.shape) for k in order[:min(n_bad, max(mismatches[0], 0))]]
        listed = [f"{i + 1:3d}: Error {float(viol[idx]):f}  {_location(ab, bb, idx, names)}"
                  for i, idx in enumerate(worst)]
        if listed:
            err += f"\n*** Maximum errors for vector of size {ab.size}:  rtol={rtol}, atol={atol}\n"
            err += "\n".join(listed)
    with np.printoptions(threshold=4, suppress=True):
        msg = npt.build_err_msg([a, b], err_msg=err, names=names)
    raise AssertionError(msg)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """``assert_almost_equal`` ignoring the elements where either is NaN.

    Parameters
    ----------
    a, b : numpy.ndarray or NDArray
    rtol, atol : None, float or dict of dtype to float
        As for ``assert_almost_equal``.
    names : tuple of two str
    """
    a = np.array(_to_numpy(a), copy=True)
    b = np.array(_to_numpy(b), copy=True)
    a, b = np.broadcast_arrays(a, b)
    a, b = a.copy(), b.copy()
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)
