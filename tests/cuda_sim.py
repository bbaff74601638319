"""Race checking for CUDA kernels run in Numba's simulator.

The simulator runs the blocks of a launch one after another and the threads
of a block one at a time (Python threads under the GIL), so a kernel whose
threads race on a GPU usually gives the right answer there: a ``+=`` from
two threads into one element, or a read of shared memory another thread is
still writing, happens in a harmless order.  ``race_check()`` makes such
kernels fail in the simulator: inside it, every launch records which thread
read, wrote or atomically updated each element of each array (global and
shared memory, by address) between which barriers, and at the end of the
launch raises ``RaceError`` when two threads touched one element without an
order between them:

- two accesses by different threads, at least one a plain write, where
  either the threads are in different blocks (nothing orders blocks inside a
  launch) or they are in one block between the same two ``syncthreads``;
- a plain access and an atomic one of the same element, under the same
  conditions (atomics only order against atomics).

Plain writes of the *same value* by several threads (an "any element is
bad" flag cleared by whoever finds one) are a benign race on a GPU and are
not reported.  Shared memory is per block, so only threads of one block are
compared there.  Only element accesses are recorded (``a[i]``, ``a[i, j]``,
``a[i][j]``); local arrays are private and not recorded.

``NBDL_SIM_RACECHECK=1`` runs every test marked ``cuda`` inside
``race_check()`` (tests/conftest.py).
"""
import contextlib
import importlib
import marshal
import os
import pickle
import sys
import threading
import types

import numpy as np
from numba.np.numpy_support import as_dtype
from numba.cuda.simulator import kernel as sim_kernel
from numba.cuda.simulator import kernelapi
from numba.cuda.simulator.cudadrv import devicearray

READ, WRITE, ATOMIC = 0, 1, 2
_KIND = {READ: "read", WRITE: "write", ATOMIC: "atomic"}


class RaceError(AssertionError):
    """Two threads of one simulated launch touched one element unordered."""


class _Launch:
    """What the threads of one launch did: per element key, per thread, the
    (barrier epoch, kind, value) of each access."""

    def __init__(self, name):
        self.name = name
        self.access = {}
        self.epoch = {}
        self.lock = threading.Lock()

    def record(self, key, thread, kind, value=None):
        epoch = self.epoch.get(thread, 0)
        with self.lock:
            per = self.access.setdefault(key, {})
            per.setdefault(thread, set()).add((epoch, kind, _hashable(value)))

    def races(self, limit=5):
        found = []
        for key, per in self.access.items():
            threads = list(per.items())
            for i, (ta, acc_a) in enumerate(threads):
                for tb, acc_b in threads[i + 1:]:
                    why = _conflict(ta, acc_a, tb, acc_b)
                    if why:
                        found.append(f"{key[1]} element at byte {key[0]}: {why}")
                        break
                if len(found) >= limit:
                    return found
        return found


def _hashable(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def _conflict(ta, acc_a, tb, acc_b):
    same_block = ta[0] == tb[0]
    for ea, ka, va in acc_a:
        for eb, kb, vb in acc_b:
            if ka == READ and kb == READ or ka == ATOMIC and kb == ATOMIC:
                continue
            if same_block and ea != eb:
                continue          # a barrier orders them
            if ka == WRITE and kb == WRITE and va == vb:
                continue          # the same value: benign
            return (f"{_KIND[ka]} by thread {ta[1]} of block {ta[0]} and {_KIND[kb]} by "
                    f"thread {tb[1]} of block {tb[0]}"
                    + ("" if not same_block else f", both after barrier {ea}"))
    return None


_state = threading.local()
_current = [None]


def _thread():
    t = threading.current_thread()
    if isinstance(t, sim_kernel.BlockThread):
        return (tuple(t.blockIdx), tuple(t.threadIdx))
    return None


def _element_offset(ary, idx):
    """Byte offset of element ``idx`` in ``ary`` (None unless ``idx`` names one element)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) != ary.ndim:
        return None
    off = 0
    for i, n, s in zip(idx, ary.shape, ary.strides):
        if not isinstance(i, (int, np.integer)):
            return None
        i = int(i)
        if i < 0:
            i += n
        off += i * s
    return off


def _note(fake, idx, kind, value=None):
    launch = _current[0]
    thread = _thread()
    if launch is None or thread is None:
        return
    ary = fake._ary
    off = _element_offset(ary, idx)
    if off is None:
        return
    shared = getattr(fake, "_nbdl_shared", False)
    where = "shared" if shared else "global"
    key = (ary.__array_interface__["data"][0] + off, where) + ((thread[0],) if shared else ())
    if getattr(_state, "atomic", False):
        kind = ATOMIC
    launch.record(key, thread, kind, value)


class _Shared(devicearray.FakeCUDAArray):
    _nbdl_shared = True


def _patched(cls, name, make):
    orig = getattr(cls, name)
    setattr(cls, name, make(orig))
    return cls, name, orig


@contextlib.contextmanager
def race_check():
    """Record the element accesses of every simulated launch in this block
    and raise ``RaceError`` at the end of a launch whose threads race (see
    the module docstring)."""
    undo = []

    def getitem(orig):
        def __getitem__(self, idx):
            ret = orig(self, idx)
            if not isinstance(ret, devicearray.FakeCUDAArray):
                _note(self, idx, READ)
            return ret
        return __getitem__

    def setitem(orig):
        def __setitem__(self, idx, val):
            ret = orig(self, idx, val)
            _note(self, idx, WRITE, self._ary[idx] if _element_offset(self._ary, idx) is not None
                  else None)
            return ret
        return __setitem__

    def call(orig):
        def __call__(self, *args):
            if self._device or sim_kernel._get_kernel_context() or _current[0] is not None:
                return orig(self, *args)
            launch = _current[0] = _Launch(getattr(self.fn, "__qualname__", str(self.fn)))
            try:
                result = orig(self, *args)
            finally:
                _current[0] = None
            found = launch.races()
            if found:
                raise RaceError(f"kernel {launch.name}: threads race on "
                                + "; ".join(found))
            return result
        return __call__

    def syncthreads(orig):
        def sync(self):
            launch = _current[0]
            if launch is not None:
                t = (tuple(self.blockIdx), tuple(self.threadIdx))
                launch.epoch[t] = launch.epoch.get(t, 0) + 1
            return orig(self)
        return sync

    def shared_array(orig):
        def array(self, shape, dtype, alignment=None):
            if shape == 0:        # dynamic shared memory: one buffer
                res = orig(self, shape, dtype, alignment)
            else:                 # one static array per line of the kernel, as the simulator's
                caller = sys._getframe(1)
                key = (caller.f_code.co_filename, caller.f_lineno)
                res = self._allocations.get(key)
                if res is None:
                    if not isinstance(dtype, np.dtype):
                        dtype = as_dtype(dtype) if not isinstance(dtype, type) else np.dtype(dtype)
                    res = self._allocations[key] = np.empty(shape, dtype)
            return devicearray.FakeWithinKernelCUDAArray(_Shared(res))
        return array

    def atomic(orig):
        def op(self, *args):
            _state.atomic = True
            try:
                return orig(self, *args)
            finally:
                _state.atomic = False
        return op

    try:
        undo.append(_patched(devicearray.FakeCUDAArray, "__getitem__", getitem))
        undo.append(_patched(devicearray.FakeCUDAArray, "__setitem__", setitem))
        undo.append(_patched(sim_kernel.FakeCUDAKernel, "__call__", call))
        undo.append(_patched(sim_kernel.BlockThread, "syncthreads", syncthreads))
        undo.append(_patched(kernelapi.FakeCUDAShared, "array", shared_array))
        for name in ("add", "sub", "max", "min", "nanmax", "nanmin", "inc", "dec", "exch",
                     "and_", "or_", "xor", "cas", "compare_and_swap"):
            undo.append(_patched(kernelapi.FakeCUDAAtomic, name, atomic))
        yield
    finally:
        for cls, name, orig in reversed(undo):
            setattr(cls, name, orig)


# -- launch recording (tools/cuda_compile_check.py) ---------------------------------------

def _resolve(module, qualname):
    try:
        obj = sys.modules.get(module) or importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    except Exception:
        return None


def _encode(v):
    if isinstance(v, (types.ModuleType, kernelapi.FakeCUDAModule)):
        return ("module", "numba.cuda" if isinstance(v, kernelapi.FakeCUDAModule) else v.__name__)
    if isinstance(v, sim_kernel.FakeCUDAKernel):
        if _resolve(v.fn.__module__, v.fn.__qualname__) is v:
            return ("ref", v.fn.__module__, v.fn.__qualname__)
        return ("cudajit", bool(v._device), describe(v.fn))
    if isinstance(v, types.FunctionType):
        if _resolve(v.__module__, v.__qualname__) is v:
            return ("ref", v.__module__, v.__qualname__)
        return ("pyfunc", describe(v))
    if isinstance(v, tuple):
        return ("tuple", tuple(_encode(x) for x in v))
    return ("value", pickle.dumps(v))


def _names(code):
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def describe(fn):
    """``fn`` (a kernel's Python function) as tools/cuda_compile_check.py
    rebuilds it: by module and name when importable as this very object,
    else by value (code, closure, the globals it reads)."""
    if "<locals>" not in fn.__qualname__ and _resolve(fn.__module__, fn.__qualname__) is not None:
        found = _resolve(fn.__module__, fn.__qualname__)
        if getattr(found, "fn", None) is fn or found is fn:
            return ("ref", fn.__module__, fn.__qualname__)
    module = sys.modules.get(fn.__module__)
    if module is not None and fn.__globals__ is vars(module):
        glob = None
    else:
        glob = tuple(sorted((k, _encode(fn.__globals__[k])) for k in _names(fn.__code__)
                            if k in fn.__globals__))
    closure = tuple(_encode(c.cell_contents) for c in fn.__closure__ or ())
    defaults = _encode(fn.__defaults__) if fn.__defaults__ else None
    return ("value", marshal.dumps(fn.__code__), fn.__name__, fn.__module__, glob, closure, defaults)


@contextlib.contextmanager
def record_launches(launches):
    """Add ``(describe(kernel), argument types) -> first test`` to the dict
    ``launches`` for every top-level simulated launch in this block."""
    import numba

    def call(orig):
        def __call__(self, *args):
            if not (self._device or sim_kernel._get_kernel_context()):
                try:
                    key = (describe(self.fn), tuple(numba.typeof(a) for a in args))
                    launches.setdefault(key, os.environ.get("PYTEST_CURRENT_TEST", "?"))
                except Exception as e:           # recorded as a failure to rebuild
                    launches.setdefault((("unrecordable", repr(e)[:200], self.fn.__qualname__),
                                         ()), os.environ.get("PYTEST_CURRENT_TEST", "?"))
            return orig(self, *args)
        return __call__

    undo = _patched(sim_kernel.FakeCUDAKernel, "__call__", call)
    try:
        yield launches
    finally:
        setattr(*undo)
