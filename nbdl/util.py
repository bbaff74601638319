"""MXNet 1.x's ``mxnet.util`` switches for NumPy semantics, adapted to nbdl.

In MXNet 1.x two flags changed behaviour: *NumPy shape* semantics (``()``
is a scalar's shape and ``0`` a zero-size dimension, instead of "unknown")
and *NumPy array* semantics (Gluon creates ``mx.np.ndarray`` instead of
``mx.nd.NDArray``).  nbdl has one array type (``nbdl.np.ndarray`` is
``nbdl.NDArray``) and its NDArrays always take 0-d and zero-size shapes, so
neither flag changes what nbdl computes.  The functions here keep MXNet's
names, signatures and bookkeeping so that 1.x code runs and can ask which
mode it is in:

- ``is_np_shape()`` / ``is_np_array()`` report the flags (False by default,
  as in MXNet);
- ``set_np_shape(active)`` sets the shape flag and returns its previous
  value; ``set_np(shape=True, array=True)`` sets both and ``reset_np()``
  clears both (turning the shape flag off while the array flag is on is
  refused, as in MXNet);
- ``np_shape(active=True)`` / ``np_array(active=True)`` are ``with`` scopes
  that set a flag and restore it on exit;
- ``use_np_shape`` / ``use_np_array`` / ``use_np`` decorate a function (or
  every method and property of a class) to run inside those scopes.

Under NumPy-shape semantics ``Symbol.tojson`` writes MXNet's ``is_np_shape``
graph attribute.  What does not follow the flags: symbol shape inference
reads a ``0`` in a declared variable shape as "unknown" (MXNet's legacy
reading) either way.

The shape flag is process-wide; the array flag, like MXNet's, is per thread.
"""
import functools
import inspect
import os
import threading

from ._docs import shared_doc
from .errors import ArgumentError

_shape_flag = [False]
_array = threading.local()


def is_np_shape():
    """Whether NumPy-shape semantics is switched on (``set_np_shape``,
    ``np_shape``, ``use_np``).  nbdl's NDArrays take 0-d and zero-size
    shapes whatever this says.

    Returns
    -------
    bool
    """
    return _shape_flag[0]


def set_np_shape(active):
    """Switch NumPy-shape semantics on or off.

    Parameters
    ----------
    active : bool
        The new state.

    Returns
    -------
    bool
        The previous state.

    Raises
    ------
    ArgumentError
        ``active`` is false while NumPy-array semantics is on (MXNet refuses
        that too; ``reset_np()`` clears both).
    """
    active = bool(active)
    if not active and is_np_array():
        raise ArgumentError("set_np_shape(False): NumPy-array semantics is still on; "
                            "deactivating NumPy-shape semantics under it is not allowed "
                            "(call reset_np() to turn both off)")
    prev = _shape_flag[0]
    _shape_flag[0] = active
    return prev


def is_np_array():
    """Whether NumPy-array semantics is switched on in this thread
    (``np_array``, ``use_np``, ``set_np``).  nbdl has one array type, so
    this changes no array's type.

    Returns
    -------
    bool
    """
    return getattr(_array, "value", False)


def _set_np_array(active):
    prev = is_np_array()
    _array.value = bool(active)
    return prev


class _FlagScope:
    """``with`` scope setting one flag and restoring it on exit."""

    def __init__(self, setter, active):
        self._setter = setter
        self._active = active
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = self._setter(self._active)
        return self

    def __exit__(self, ptype, value, trace):
        if self._active is not None and self._prev != self._active:
            self._setter(self._prev)


# what np_shape and np_array take and give
_SCOPE = """
Parameters
----------
active : bool or None, default True
    The state inside the scope; None leaves it as it is.

Returns
-------
context manager
"""


@shared_doc(scope=_SCOPE)
def np_shape(active=True):
    """A ``with`` scope with NumPy-shape semantics on (or off).

    {scope}
    """
    return _FlagScope(set_np_shape, active)


@shared_doc(scope=_SCOPE)
def np_array(active=True):
    """A ``with`` scope with NumPy-array semantics on (or off) in this thread.

    {scope}
    """
    return _FlagScope(_set_np_array, active)


def _decorate(func, scopes, what):
    if inspect.isclass(func):
        for name, member in list(vars(func).items()):
            if isinstance(member, property):
                setattr(func, name, property(
                    _decorate(member.fget, scopes, what) if member.fget else None,
                    _decorate(member.fset, scopes, what) if member.fset else None,
                    _decorate(member.fdel, scopes, what) if member.fdel else None,
                    member.__doc__))
            elif isinstance(member, (staticmethod, classmethod)):
                setattr(func, name, type(member)(_decorate(member.__func__, scopes, what)))
            elif inspect.isfunction(member):
                setattr(func, name, _decorate(member, scopes, what))
        return func
    if not callable(func):
        raise ArgumentError(f"{what} can only decorate classes and callables, "
                            f"got {type(func).__name__}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with scopes[0]():
            if len(scopes) == 1:
                return func(*args, **kwargs)
            with scopes[1]():
                return func(*args, **kwargs)
    return wrapped


# what use_np_shape, use_np_array and use_np take and give
_WRAPS = """
Parameters
----------
func : callable or class
    What to wrap; a class is changed in place and returned.

Returns
-------
callable or class
"""


@shared_doc(wraps=_WRAPS)
def use_np_shape(func):
    """Run ``func`` (or every method and property of a class) with
    NumPy-shape semantics on.

    {wraps}
    """
    return _decorate(func, (np_shape,), "use_np_shape")


@shared_doc(wraps=_WRAPS)
def use_np_array(func):
    """Run ``func`` (or every method and property of a class) with
    NumPy-array semantics on.

    {wraps}
    """
    return _decorate(func, (np_array,), "use_np_array")


@shared_doc(wraps=_WRAPS)
def use_np(func):
    """Run ``func`` (or every method and property of a class) with both
    NumPy-shape and NumPy-array semantics on (``use_np_shape`` and
    ``use_np_array`` together).

    {wraps}
    """
    return _decorate(func, (np_shape, np_array), "use_np")


def set_np(shape=True, array=True):
    """Set NumPy-shape and NumPy-array semantics together.

    Parameters
    ----------
    shape : bool, default True
        NumPy-shape semantics.
    array : bool, default True
        NumPy-array semantics (needs ``shape``).

    Raises
    ------
    ArgumentError
        ``array`` without ``shape``, as in MXNet.
    """
    if not shape and array:
        raise ArgumentError("set_np(shape=False, array=True): NumPy-array semantics "
                            "needs NumPy-shape semantics")
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Turn NumPy-shape and NumPy-array semantics off (``set_np(False, False)``)."""
    set_np(shape=False, array=False)


def getenv(name):
    """The value of environment variable ``name``, or None when unset.

    Parameters
    ----------
    name : str
    """
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value``; None unsets it.

    Parameters
    ----------
    name : str
    value : str or None
    """
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


__all__ = ["is_np_shape", "set_np_shape", "np_shape", "use_np_shape", "is_np_array",
           "np_array", "use_np_array", "use_np", "set_np", "reset_np", "getenv", "setenv"]
