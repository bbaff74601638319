"""Default dtypes and tolerances of ``nbdl.test_utils`` (MXNet 1.9.1's values)."""
import numbers

import numpy as np

_FLOAT_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
               np.dtype(np.float64): 1e-5}
_FLOAT_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
               np.dtype(np.float64): 1e-20}
_EXACT = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64]


class _Tolerances(dict):
    """dtype -> tolerance: the floating dtypes' given, integers and bool 0
    (exact); dtypes not listed fall back like their kind (other floats as
    float64)."""

    def __init__(self, floats):
        super().__init__(floats)
        self.update({np.dtype(t): 0 for t in _EXACT})

    def __missing__(self, key):
        dt = np.dtype(key)
        if dt.kind in "biu":
            return 0
        return self[np.dtype(np.float64)]


def default_dtype():
    """The dtype test arrays are made in: float32.

    Returns
    -------
    type
    """
    return np.float32


def default_rtols():
    """Relative tolerance per dtype (float16 1e-2, float32 1e-4, float64
    1e-5, integers and bool 0).

    Returns
    -------
    dict of numpy.dtype to float
    """
    return _Tolerances(_FLOAT_RTOL)


def default_atols():
    """Absolute tolerance per dtype (float16 1e-1, float32 1e-3, float64
    1e-20, integers and bool 0).

    Returns
    -------
    dict of numpy.dtype to float
    """
    return _Tolerances(_FLOAT_ATOL)


def default_numeric_eps():
    """Finite-difference step per floating dtype (powers of two: float16
    1/64, float32 1/512, float64 1/16384).

    Returns
    -------
    dict of numpy.dtype to float
    """
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype whose tolerance applies to ``dat``: its own dtype (nbdl's
    kernels compute float32 in float32 on every device; MXNet returned
    float16 for float32 on TF32 GPUs).

    Parameters
    ----------
    dat : numpy.ndarray, NDArray or scalar
    """
    return np.dtype(getattr(dat, "dtype", None) or np.asarray(dat).dtype)


def get_tolerance(dat, tol, default_tol):
    """``tol`` when it is a number, else its (or ``default_tol``'s) entry
    for ``dat``'s effective dtype.

    Parameters
    ----------
    dat : array-like
    tol : None, float or dict of dtype to float
    default_tol : dict of dtype to float
    """
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else {np.dtype(k): v for k, v in tol.items()}
    return tol.get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol):
    """The (rtol, atol) for comparing ``x`` and ``y``: the larger of the two
    operands' tolerances.

    Parameters
    ----------
    x, y : array-like or scalar
    rtol, atol : None, float or dict of dtype to float
    """
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or ``dtype``'s default absolute tolerance when None.

    Parameters
    ----------
    atol : float, optional
    dtype : numpy dtype
    """
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or ``dtype``'s default relative tolerance when None.

    Parameters
    ----------
    rtol : float, optional
    dtype : numpy dtype
    """
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` (a tolerated fraction of mismatching elements), 0 when None.

    Parameters
    ----------
    etol : float, optional
    """
    return 0 if etol is None else etol
