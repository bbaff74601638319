"""When a CPU kernel's ``parallel=True`` variant is worth compiling and calling.

One rule for every kernel family: a parallel variant only where there is
more than one thread to run it on, and only for arrays of at least
``NBDL_PARALLEL_MIN`` elements (each parallel call costs 1.5-3 us, and
compiling a ``parallel=True`` kernel takes several times as long as its
serial twin, so a process limited to one thread never compiles one).

The thread count is Numba's (``NUMBA_NUM_THREADS``), or ``NBDL_NUM_THREADS``
when that is set: it is applied with ``numba.set_num_threads`` the first time
a kernel asks in each thread (Numba scopes the setting per thread)."""
import inspect
import threading
import types

import numba

from ... import config
from ...ops.registry import declare_serial_twin
from ..shared.jit import njit

_applied = threading.local()


def threads():
    """Threads a parallel kernel started from this thread would use."""
    if not getattr(_applied, "done", False):
        _applied.done = True
        n = config.num_threads()
        if n > 0:
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    return numba.get_num_threads()


@njit(cache=True, inline="always")
def chunk(n, t, nt):
    """[lo, hi) of chunk ``t`` of ``nt`` near-equal chunks of ``range(n)``: a
    parallel kernel's share for thread ``t``."""
    return n * t // nt, n * (t + 1) // nt


def use_parallel(n):
    """Whether a kernel over ``n`` elements should be the parallel variant.

    Parameters
    ----------
    n : int
        Elements the kernel's parallel loop covers (its work).
    """
    return n >= config.parallel_threshold() and threads() > 1


def twins(*pairs):
    """Declare ``(parallel, serial)`` kernel pairs as serial twins (see
    ``nbdl.ops.registry.declare_serial_twin``); both must take the same
    parameters.

    Parameters
    ----------
    *pairs : (dispatcher, dispatcher)
        A ``parallel=True`` kernel and its serial variant.
    """
    for par, ser in pairs:
        a, b = (inspect.signature(d.py_func).parameters for d in (par, ser))
        if list(a) != list(b):
            raise TypeError(f"{par.py_func.__name__} and {ser.py_func.__name__} take different "
                            f"parameters: {list(a)} / {list(b)}")
        declare_serial_twin(par, lambda ser=ser: ser)


def variant(py_func, name):
    """A copy of the plain function ``py_func`` named ``name``, to compile the
    same source a second time with other options (``parallel=True``: a
    ``prange`` is a ``range`` in the serial compilation).  Numba's on-disk
    cache keys a function by its qualified name, not by its options, so the
    two compilations need two names; ``name`` should also be the module
    attribute the compiled copy is kept in.

    Parameters
    ----------
    py_func : function
        Module-level function without free variables.
    name : str
        The copy's name and qualified name.
    """
    f = types.FunctionType(py_func.__code__.replace(co_name=name, co_qualname=name),
                           py_func.__globals__, name, py_func.__defaults__, py_func.__closure__)
    f.__qualname__ = name
    f.__module__ = py_func.__module__
    return f


def serial_and_parallel(py_func, suffix="_parallel", **options):
    """``(serial, parallel)``: the plain kernel ``py_func``, written with
    ``prange``, compiled twice with ``njit(cache=True, **options)``: as is
    (its ``prange`` a ``range``) and with ``parallel=True`` (a ``variant``
    named ``<name><suffix>``), declared serial twins.

    Parameters
    ----------
    py_func : function
        Module-level function without free variables.
    suffix : str
        Appended to its name for the parallel compilation's.
    **options
        Further ``njit`` options both compilations share (``fastmath``,
        ``error_model``, ...).

    Returns
    -------
    (dispatcher, dispatcher)
    """
    serial = njit(cache=True, **options)(py_func)
    par = njit(cache=True, parallel=True, **options)(
        variant(py_func, py_func.__name__ + suffix))
    twins((par, serial))
    return serial, par
