"""``blas_get_threads()`` / ``blas_set_threads(n)`` callable from ``@njit``
code, for the BLAS that numba's ``np.dot`` calls (scipy's, through
``scipy.linalg.cython_blas``).

A kernel that runs GEMMs inside a ``prange`` holds that BLAS to one thread
for the duration, so numba's threads and BLAS's threads never nest; doing it
inside the kernel keeps the kernel an ``@njit`` dispatcher a generated driver
can call.  The functions are bound by symbol name
(``numba.types.ExternalFunction`` + ``llvmlite.binding.add_symbol``), so
kernels that use them stay cacheable (``cache=True``): the address is
resolved when the cached code is loaded, after this module registered it.

The library is found from the address of cython_blas's ``sgemm`` (``dladdr``);
OpenBLAS (any symbol prefix/suffix) and BLIS are recognised.  With another
BLAS (MKL, reference) the functions are no-ops and ``BLAS_THREAD_CONTROL``
is False: kernels then should not pick the batch-parallel variant.
"""
import ctypes
import ctypes.util

from llvmlite import binding as llvm
from numba import types

from ..shared.jit import njit

_GET = "nbdl_blas_get_num_threads"
_SET = "nbdl_blas_set_num_threads"
_keep = []   # ctypes objects whose addresses were registered
_py_get = [lambda: 0]   # the bound library's get_num_threads, for Python callers


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _blas_library():
    try:
        from scipy.linalg import cython_blas
        capsule = cython_blas.__pyx_capi__["sgemm"]
        get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
        get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        addr = get_ptr(capsule, get_name(capsule))
        libdl = ctypes.CDLL(ctypes.util.find_library("dl") or None)
        info = _DlInfo()
        if not libdl.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
            return None
        # cython_blas's sgemm is a wrapper in scipy; its BLAS is a dependency of that
        # module, loaded globally-visible or not: open it by the name the loader used.
        return ctypes.CDLL(info.dli_fname.decode())
    except Exception:   # no scipy, no dladdr: fall back to no-ops
        return None


def _find(lib, names):
    for n in names:
        try:
            return getattr(lib, n)
        except AttributeError:
            continue
    return None


def _bind():
    names_get, names_set = [], []
    for pre in ("", "scipy_"):
        for suf in ("", "64_"):
            names_get.append(f"{pre}openblas_get_num_threads{suf}")
            names_set.append(f"{pre}openblas_set_num_threads{suf}")
    names_get.append("bli_thread_get_num_threads")
    names_set.append("bli_thread_set_num_threads")
    libs = []
    lib = _blas_library()
    if lib is not None:
        libs.append(lib)
    try:   # the BLAS scipy links is loaded by now; find it among scipy.libs
        import glob
        import os

        import scipy
        for path in glob.glob(os.path.join(os.path.dirname(os.path.dirname(scipy.__file__)),
                                           "scipy.libs", "*openblas*")):
            libs.append(ctypes.CDLL(path))
    except Exception:
        pass
    for lib in libs:
        get, set_ = _find(lib, names_get), _find(lib, names_set)
        if get is not None and set_ is not None:
            get.restype, get.argtypes = ctypes.c_int, []
            set_.restype, set_.argtypes = None, [ctypes.c_int]
            _keep.extend([get, set_])
            _py_get[0] = get
            llvm.add_symbol(_GET, ctypes.cast(get, ctypes.c_void_p).value)
            llvm.add_symbol(_SET, ctypes.cast(set_, ctypes.c_void_p).value)
            return True
    get_cb = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 1)
    set_cb = ctypes.CFUNCTYPE(None, ctypes.c_int)(lambda n: None)
    _keep.extend([get_cb, set_cb])
    llvm.add_symbol(_GET, ctypes.cast(get_cb, ctypes.c_void_p).value)
    llvm.add_symbol(_SET, ctypes.cast(set_cb, ctypes.c_void_p).value)
    return False


BLAS_THREAD_CONTROL = _bind()
blas_get_threads = types.ExternalFunction(_GET, types.intc())
blas_set_threads = types.ExternalFunction(_SET, types.void(types.intc))



@njit(cache=True)
def hold_blas(hold):
    """Hold BLAS to one thread when ``hold`` (a small product: waking BLAS's
    threads costs more than it saves, and on a busy machine a sleeping thread
    can stall a 20-us GEMM for milliseconds).  Returns what to restore."""
    if hold:
        prev = blas_get_threads()
        blas_set_threads(1)
        return prev
    return 0


@njit(cache=True)
def release_blas(prev):
    if prev > 0:
        blas_set_threads(prev)


def hold_for(flops):
    """The ``hold`` scalar for a product of ``flops`` floating-point operations."""
    from ... import config
    return int(BLAS_THREAD_CONTROL and flops < config.blas_serial_max_flops())


def one_pool():
    """Whether nbdl runs one thread pool (``NBDL_THREAD_POOL=numba``, the
    default, and a BLAS whose threads it can hold): products large enough
    for threads are split over Numba's threads with BLAS held to one,
    instead of running on BLAS's own threads."""
    from ... import config
    return BLAS_THREAD_CONTROL and config.thread_pool() == "numba"


def serial_blas():
    """Whether the BLAS runs on one thread now (the user set
    ``OPENBLAS_NUM_THREADS=1``, say): products large enough to want threads
    must then split over Numba's (``matrix.fc_forward_split``)."""
    return BLAS_THREAD_CONTROL and _py_get[0]() == 1


__all__ = ["blas_get_threads", "blas_set_threads", "BLAS_THREAD_CONTROL", "hold_blas",
           "release_blas", "hold_for", "one_pool", "serial_blas"]
