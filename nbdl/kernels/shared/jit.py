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
argument types, not by compile flags), its module skips LLVM's
module-level passes (``_TwinLibrary``): the kernel that links it runs them
over the whole tree once; and it gets no machine code: its cache entry is
its IR (bitcode), which is what its callers link.

``inline="always"`` is LLVM's, not Numba's: Numba inlines such a function
into its caller's own IR, where it is typed, rewritten and lowered again at
every call site (a copy of its IR each time: a tenth of a training step's
compiling).  Here the function gets a twin per flavour of the compilations
that call it (their ``error_model`` and ``fastmath`` flags, which an
inlined body takes from its caller), compiled once, its function marked
``alwaysinline``: the kernel that links it inlines it before its own
optimisation, as Numba's inlining did (run time unchanged, measured).
Such twins are small and compiled wherever their callers are (a compile
pool does not hand them out).  ``inline="numba"`` asks for Numba's own
inlining where it measurably runs faster: the convolution epilogue's
per-row helpers (``kernels.cpu.conv_epilogue``: MobileNet's inference ran
5-6% slower with them as LLVM-inlined twins; the cause is not isolated).

Loading this module turns LLVM's loop strength reduction off for the
process (``NBDL_LLVM_LSR=1`` keeps it: ``nbdl.config.llvm_lsr``).

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

from llvmlite import binding as ll, ir as llvmir
from numba.core import caching, cgutils, types
from numba.core.codegen import JITCodeLibrary, RuntimeLinker
from numba.core.compiler import Compiler, CompileResult
from numba.core.registry import CPUDispatcher
from numba.core.targetconfig import ConfigStack

__all__ = ["njit", "set_compile_hook", "KernelDispatcher", "callee_of"]


def _llvm_options():
    """LLVM's loop strength reduction off for this process, unless
    ``NBDL_LLVM_LSR=1`` (``nbdl.config.llvm_lsr``: a third of the machine-code
    generation of nbdl's kernels, no measurable run time)."""
    from ... import config
    if not config.llvm_lsr():
        ll.set_option("nbdl", "-disable-lsr")


_llvm_options()

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
    """A callee twin's cache files: the kernel's name with ``tag``
    (``-callee``, or ``-inline-<flags hash>`` for an inlined function's twin
    compiled for its callers' flags: Numba's cache index is keyed by argument
    types, not by compile flags, so the kernel and its twins must not share
    files)."""
    tag = "-callee"

    def get_filename_base(self, fullname, abiflags):
        return super().get_filename_base(fullname + self.tag, abiflags)

    def rebuild(self, target_context, payload):
        """The compile result from a twin's cache entry: its library from
        the bitcode (``_TwinLibrary.from_bitcode``), as Numba's
        ``CompileResult._rebuild`` does otherwise."""
        (name, kind, data), fndesc, env, signature, objectmode, lifted, typeann, \
            reload_init, referenced_envs = payload
        if kind != "bitcode":
            return super().rebuild(target_context, payload)
        for fn in reload_init or ():
            fn()
        library = _TwinLibrary.from_bitcode(target_context.codegen(), name, data)
        cfunc = target_context.get_executable(library, fndesc, env)
        cres = CompileResult(target_context=target_context,
                             typing_context=target_context.typing_context, library=library,
                             environment=env, entry_point=cfunc, fndesc=fndesc,
                             type_annotation=typeann, signature=signature,
                             objectmode=objectmode, lifted=lifted, typing_error=None,
                             call_helper=None, metadata=None, reload_init=reload_init,
                             referenced_envs=referenced_envs)
        for e in referenced_envs:
            if library.env_names is None or e.env_name in library.env_names:
                library.codegen.set_env(e.env_name, e)
        return cres


@functools.lru_cache(maxsize=None)
def _callee_cache_class(tag):
    """The ``FunctionCache`` class of the twins whose files carry ``tag``."""
    impl = type("_CalleeCacheImpl", (_CalleeCacheImpl,), {"tag": tag})
    return type("_CalleeCache", (caching.FunctionCache,), {"_impl_class": impl})


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

    # ``njit(inline="always")``: calls from compiled code link the twin
    # compiled for the caller's flags, which LLVM inlines (see the module docstring)
    inlined = False

    def _linked(self, sig):
        """Whose code a call from compiled code with argument types ``sig``
        links: for an inlined function the twin for the calling
        compilation's flags (``_caller_flags``); else this dispatcher's when
        it has compiled (or loaded) them for Python's calls already (a
        native driver calls kernels that have run), else the callee twin's,
        compiled if need be."""
        if self.inlined:
            return self.callee(_caller_flags())
        return self if sig in self.overloads else self.callee()

    def callee(self, flags=None):
        """The callee twin: the dispatcher that compiles this function for
        calls from compiled code, with the same function and options but
        without the CPython wrapper that lets Python call it (a callee's
        caller never uses it).  Python's calls compile this dispatcher
        itself.

        Parameters
        ----------
        flags : tuple, optional
            ``(error_model, fastmath flags)`` of the calling compilation, for
            an inlined function (``inlined``): its twin for those flags,
            marked for LLVM to inline.
        """
        twins = self.__dict__.setdefault("_callees", {})
        twin = twins.get(flags)
        if twin is None:
            options = dict(self.targetoptions, **_CALLEE_FLAGS)
            tag = _CalleeCacheImpl.tag
            if flags is not None:
                options["error_model"] = flags[0]
                options["fastmath"] = set(flags[1]) or False
                tag = "-inline-" + hashlib.sha1(repr(flags).encode()).hexdigest()[:8]
            twin = _CalleeDispatcher(py_func=self.py_func, locals={}, targetoptions=options,
                                     pipeline_class=_TwinCompiler if flags is None
                                     else _InlineTwinCompiler)
            twin.public = self
            if isinstance(self._cache, _KernelCache):
                twin._cache = _callee_cache_class(tag)(self.py_func)
            twins[flags] = twin
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

    env_names = None          # the environments defined apart (None: the module is in the JIT)

    def _optimize_final_module(self):
        pass

    def _finalize_final_module(self):
        """Ready for linking, without machine code: nothing calls a twin's
        own code (its callers link its IR and run their copies), and the
        machine code of every twin, each with its linked call tree, was a
        twelfth of a training step's compiling.  Only the twin's environment
        pointers (``_ZN08NumbaEnv...``, set by Numba when the twin is
        compiled or loaded, read by its callers' copies) go into the JIT, as
        a module of their own.  A module with references the runtime linker
        resolves (recursion) is finalized as Numba does."""
        mod = self._final_module
        if any(gv.name.startswith(RuntimeLinker.PREFIX) for gv in mod.global_variables):
            return super()._finalize_final_module()
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        envs = [gv.name for gv in mod.global_variables
                if gv.name.startswith("_ZN08NumbaEnv") and not gv.is_declaration]
        self.env_names = frozenset(envs)
        if envs:
            ir_env = self._codegen._create_empty_module(self.name + ".env")
            for name in envs:
                gv = llvmir.GlobalVariable(ir_env, cgutils.voidptr_t, name=name)
                gv.linkage = "common"
                gv.initializer = cgutils.get_null_value(gv.type.pointee)
            env_mod = ll.parse_assembly(str(ir_env))
            self._codegen._add_module(env_mod)
            self._codegen._engine.finalize_object()
        self._finalized = True

    def serialize_using_object_code(self):
        """The cache's form of a twin: its IR (bitcode), there being no
        object code (``_CalleeCacheImpl.rebuild`` reads it back)."""
        return self.serialize_using_bitcode()

    @classmethod
    def from_bitcode(cls, codegen, name, bitcode):
        """A twin's library read back from ``serialize_using_object_code``'s
        bitcode, finalized as above (no machine code)."""
        lib = cls(codegen, name)
        lib._final_module = ll.parse_bitcode(bitcode)
        lib._finalize_final_module()
        return lib


class _InlineTwinLibrary(_TwinLibrary):
    """An inlined function's twin's library: its functions are marked
    ``alwaysinline``, so the LLVM inliner of the kernel that links them puts
    their bodies in their callers."""

    def add_ir_module(self, ir_module):
        for fn in ir_module.functions:
            if not fn.is_declaration and "noinline" not in fn.attributes:
                fn.attributes.add("alwaysinline")
        super().add_ir_module(ir_module)


class _TwinCompiler(Compiler):
    """Numba's pipeline, compiling into a ``_TwinLibrary``."""
    library_class = _TwinLibrary

    def compile_extra(self, func):
        if self.state.library is None:
            lib = self.library_class(self.state.targetctx.codegen(), func.__qualname__)
            lib.enable_object_caching()         # as Numba's lowering pass does
            self.state.library = lib
        return super().compile_extra(func)


class _InlineTwinCompiler(_TwinCompiler):
    """Numba's pipeline, compiling into an ``_InlineTwinLibrary``."""
    library_class = _InlineTwinLibrary


def _caller_flags():
    """``(error_model, sorted fastmath flags)`` of the compilation under way
    (None outside one): what an inlined body gets from the function it is
    inlined into."""
    flags = ConfigStack.top_or_none()
    if flags is None:
        return None
    return (flags.error_model, tuple(sorted(flags.fastmath.flags)))


class _CalleeDispatcher(KernelDispatcher):
    """A kernel's callee twin (``KernelDispatcher.callee``); ``public`` is
    the kernel.  It has no Python entry point: calling it from Python is an
    error, not a crash."""

    def callee(self, flags=None):
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
        ``inline``, ``error_model``, ...); ``inline="always"`` is LLVM's
        inlining of a twin compiled for the caller's flags, ``inline="numba"``
        Numba's own (see the module docstring).

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
    inlined = options.get("inline") == "always"
    if inlined:                 # inlined by LLVM, not into Numba's IR: see the module docstring
        options["inline"] = "never"
    elif options.get("inline") == "numba":
        options["inline"] = "always"        # Numba's own inlining
    cache = options.pop("cache", False)
    targetoptions = dict(options, nopython=True)
    targetoptions.setdefault("boundscheck", None)
    # the C-callable wrapper serves ``numba.cfunc`` and first-class function
    # values, neither of which nbdl uses: a tenth of a small kernel's compile
    targetoptions.setdefault("no_cfunc_wrapper", True)
    disp = KernelDispatcher(py_func=fn, locals={}, targetoptions=targetoptions)
    disp.inlined = inlined
    if cache:
        disp.enable_caching()
    return disp

