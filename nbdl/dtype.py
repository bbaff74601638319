"""The dtypes nbdl knows: names, numpy types and MXNet's type flags."""
import numpy as np

from .errors import DTypeError

# MXNet's mshadow type flags (used in -symbol.json "__dtype__" and .params files).
_FLAGS = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
          5: np.int8, 6: np.int64, 7: np.bool_}
_TO_FLAG = {np.dtype(v): k for k, v in _FLAGS.items()}

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# dtypes whose arithmetic kernels are compiled (float16: see FLOATING below).
COMPUTE = FLOATS + (np.dtype(np.int32), np.dtype(np.int64))
# integer dtypes of the arithmetic, comparison and logical elementwise ops
INTEGERS = tuple(np.dtype(t) for t in (np.int32, np.int64, np.uint8, np.int8))
HALF = np.dtype(np.float16)
# the generated elementwise kernels: float16 stored, computed in float32
FLOATING = FLOATS + (HALF,)
NUMERIC = FLOATING + INTEGERS
ALL = tuple(np.dtype(v) for v in _FLAGS.values())

default = np.dtype(np.float32)


def as_dtype(d):
    """Normalise a dtype given as a numpy dtype, a type, a name or an MXNet flag."""
    if d is None:
        return default
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        if int(d) not in _FLAGS:
            raise DTypeError(f"unknown MXNet dtype flag {d}")
        return np.dtype(_FLAGS[int(d)])
    try:
        dt = np.dtype(d)
    except TypeError as e:
        raise DTypeError(f"unknown dtype {d!r}") from e
    if dt not in _TO_FLAG:
        raise DTypeError(f"dtype {dt} is not supported by nbdl "
                         f"(supported: {', '.join(str(x) for x in ALL)})")
    return dt


def to_flag(d):
    return _TO_FLAG[as_dtype(d)]


def from_flag(f):
    return as_dtype(int(f))
