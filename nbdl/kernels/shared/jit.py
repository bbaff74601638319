"""``njit`` for CPU code (kernels.cpu and the host checks in kernels.shared): Numba's, except that a call from compiled code
never specialises the callee on the *values* of its constant arguments.

Numba types a constant written in compiled code (``helper(x, 0)``, ``True``)
as a literal type, and a dispatcher called with it compiles a specialisation
for that value: ``helper(x, 0)`` and ``helper(x, 1)`` from two kernels were
two compilations of ``helper``, each with its whole call tree (the deformable
convolution's backward core was compiled seven times, once per flag
combination of its four entry points).  Compilation is what a fresh machine
waits for, so the dispatchers made here type such a call with the literal's
plain type (``int64``, ``bool``, ...): one compilation per argument *types*,
as a call from Python gets.  Kernels that need a value at compile time can
still ask for it with ``numba.literally``.

Compiled functions get no C-callable (cfunc) wrapper: nothing in nbdl
calls a kernel through a C function pointer.  A call from compiled code
compiles the callee's *callee twin* (``KernelDispatcher.callee``; not the
serial twin of a parallel kernel, ``kernels.cpu._parallel``): the same
function and options without the CPython wrapper either, through which
Python calls a compiled function.  A callee's caller links its code and
never uses the wrappers, and they were a tenth to a fifth of a
convolution's or a training step's compilation (ResNet-50's first
inference 9.3 -> 8.3 s of compiling, ResNet-18's first training step
24.4 -> 21.0 s).  A function called from Python compiles the kernel
itself, with its CPython wrapper; a caller compiled after that links the
kernel's code (a native driver calls kernels that have run), so only a
function first called from compiled code and later from Python compiles
twice.  The twin has cache files of its own (Numba keys a cache index by
argument types, not by compile flags), and its module skips LLVM's
module-level passes (``_TwinLibrary``): the kernel that links it runs them
over the whole tree once.

Everything else is Numba's ``njit``: the same options (``cache``,
``parallel``, ``inline``, ...), the same dispatcher class underneath.

``set_compile_hook(hook)`` lets a higher layer see a compilation coming:
``hook(dispatcher, argument_types)`` runs before a ``KernelDispatcher``
compiles (or loads from the on-disk cache) for types it has no code for in
this process, callees compiled for a caller included, and may return a
callable that runs once that compilation has ended, failed or not (the
executor's compile pool uses the pair to share a graph's kernels and their
callees with worker processes: it waits for a kernel a worker is compiling,
then loads it from the on-disk cache instead of compiling it a second time,
and marks the ones this process compiled).
"""
import functools
import hashlib
import os

from numba.core import caching, types
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler
from numba.core.registry import CPUDispatcher

__all__ = ["njit", "set_compile_hook", "KernelDispatcher", "callee_of"]

_hook = [None]


def set_compile_hook(hook):
    """Install ``hook(dispatcher, argument_types)`` (None removes it); returns
    the hook it replaces.

    Parameters
    ----------
    hook : callable or None
        Called before a ``KernelDispatcher`` compiles for argument types it
        has no code for in this process; it may block (a worker process is
        compiling the same kernel into the on-disk cache) and may return a
        callable, called without arguments when that compilation has ended.
    """
    old = _hook[0]
    _hook[0] = hook
    return old


def _plain(ty):
    """``ty`` with literal values dropped (also inside tuples)."""
    ty = types.unliteral(ty)
    if isinstance(ty, types.UniTuple):
        return types.UniTuple(_plain(ty.dtype), ty.count)
    if isinstance(ty, types.Tuple):
        return types.Tuple([_plain(t) for t in ty.types])
    return ty


_KERNELS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def tree_stamp(root=_KERNELS_ROOT):
    """A hash of every Python source under ``nbdl/kernels``.  Numba stamps a
    cached kernel with its own file's content only, so an edit to a file
    whose compiled functions it calls (``kernels/shared``, a helper module)
    would leave stale machine code in the cache; nbdl's kernels are stamped
    with the whole tree as well, so any edit there recompiles them."""
    h = hashlib.sha1()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(d, f), "rb") as fh:
                    h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()


class _TreeStamped:
    def get_source_stamp(self):
        return (super().get_source_stamp(), tree_stamp())


def _stamped(cls):
    return type(cls.__name__, (_TreeStamped, cls), {})


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_stamped(c) for c in caching.CompileResultCacheImpl._locator_classes]


class _KernelCache(caching.FunctionCache):
    """Numba's on-disk cache, with sources stamped by ``tree_stamp`` too."""
    _impl_class = _KernelCacheImpl


class _CalleeCacheImpl(_KernelCacheImpl):
    """A callee twin's cache files: the kernel's name with ``-callee``
    (Numba's cache index is keyed by argument types, not by compile flags,
    so the twin and the kernel must not share files)."""

    def get_filename_base(self, fullname, abiflags):
        return super().get_filename_base(fullname + "-callee", abiflags)


class _CalleeCache(caching.FunctionCache):
    _impl_class = _CalleeCacheImpl


# the compile flag of a callee twin: no entry point from Python (no kernel
# has a C entry point: ``njit`` sets ``no_cfunc_wrapper``)
_CALLEE_FLAGS = {"no_cpython_wrapper": True}


class KernelDispatcher(CPUDispatcher):
    """A CPU dispatcher whose calls from compiled code compile (and are
    typed) for the arguments' non-literal types, in its callee twin."""

    def get_call_template(self, args, kws):
        args = tuple(_plain(a) for a in args)
        kws = {k: _plain(v) for k, v in kws.items()}
        _, folded = self._compiler.fold_argument_types(args, kws)
        return CPUDispatcher.get_call_template(self._linked(tuple(folded)), args, kws)

    def get_overload(self, sig):
        """The compiled function a call from compiled code links (``_linked``'s)."""
        return CPUDispatcher.get_overload(self._linked(tuple(sig)), sig)

    def _linked(self, sig):
        """Whose code a call from compiled code with argument types ``sig``
        links: this dispatcher's when it has compiled (or loaded) them for
        Python's calls already (a native driver calls kernels that have run),
        else the callee twin's, compiled if need be."""
        return self if sig in self.overloads else self.callee()

    def callee(self):
        """The callee twin: the dispatcher that compiles this function for
        calls from compiled code, with the same function and options but
        without the CPython wrapper that lets Python call it (a callee's
        caller never uses it).  Python's calls compile this dispatcher
        itself."""
        twin = self.__dict__.get("_callee")
        if twin is None:
            twin = _CalleeDispatcher(py_func=self.py_func, locals={},
                                     targetoptions=dict(self.targetoptions, **_CALLEE_FLAGS),
                                     pipeline_class=_TwinCompiler)
            twin.public = self
            if isinstance(self._cache, _KernelCache):
                twin._cache = _CalleeCache(self.py_func)
            self.__dict__["_callee"] = twin
        return twin

    def enable_caching(self):
        self._cache = _KernelCache(self.py_func)

    def compile(self, sig):
        hook = _hook[0]
        if hook is None or not isinstance(sig, tuple) or sig in self.overloads:
            return super().compile(sig)
        after = hook(self, sig)
        try:
            return super().compile(sig)
        finally:
            if after is not None:
                after()


class _TwinLibrary(JITCodeLibrary):
    """A callee twin's code library: its module is not run through the
    module-level optimisation passes.  Its callers link its IR and optimise
    the whole linked module themselves, so at every level of a call tree the
    passes re-optimised everything below it (ResNet-50's first inference
    7.2 -> 5.2 s of compiling without them; run time unchanged: a kernel
    called from Python is optimised in full, callees included.  Only a
    fast-math sum in a callee may round differently, if the vectoriser now
    splits its loop otherwise)."""

    def _optimize_final_module(self):
        pass


class _TwinCompiler(Compiler):
    """Numba's pipeline, compiling into a ``_TwinLibrary``."""

    def compile_extra(self, func):
        if self.state.library is None:
            lib = _TwinLibrary(self.state.targetctx.codegen(), func.__qualname__)
            lib.enable_object_caching()         # as Numba's lowering pass does
            self.state.library = lib
        return super().compile_extra(func)


class _CalleeDispatcher(KernelDispatcher):
    """A kernel's callee twin (``KernelDispatcher.callee``); ``public`` is
    the kernel.  It has no Python entry point: calling it from Python is an
    error, not a crash."""

    def callee(self):
        return self

    def __call__(self, *args, **kws):
        raise TypeError(f"{self.py_func.__qualname__}: the callee twin of a kernel is "
                        "called from compiled code only; call the kernel itself")


def callee_of(module, name):
    """The callee twin of kernel ``name`` of ``module`` (how a compile-pool
    worker rebuilds one: ``nbdl.executor.compile_claims.describe``).

    Parameters
    ----------
    module : str
        The kernel's module.
    name : str
        Its name there.
    """
    import importlib
    return getattr(importlib.import_module(module), name).callee()


def njit(*args, **options):
    """``numba.njit`` with ``KernelDispatcher`` (see the module docstring).

    Parameters
    ----------
    *args
        The function to compile (bare decorator use) or nothing.
    **options
        Numba's ``njit`` options (``cache``, ``parallel``, ``fastmath``,
        ``inline``, ``error_model``, ...).

    Returns
    -------
    A dispatcher, or a decorator that makes one.
    """
    if args and callable(args[0]):
        return _make(args[0], options)

    def decorate(fn):
        return _make(fn, options)
    return decorate


def _make(fn, options):
    options = dict(options)
    cache = options.pop("cache", False)
    targetoptions = dict(options, nopython=True)
    targetoptions.setdefault("boundscheck", None)
    # the C-callable wrapper serves ``numba.cfunc`` and first-class function
    # values, neither of which nbdl uses: a tenth of a small kernel's compile
    targetoptions.setdefault("no_cfunc_wrapper", True)
    disp = KernelDispatcher(py_func=fn, locals={}, targetoptions=targetoptions)
    if cache:
        disp.enable_caching()
    return disp

