"""Generated native drivers: a static schedule compiled into one ``@njit``
function that calls every kernel, so a forward or backward pass is one
native call (about 0.05 us an op) instead of one Python-level dispatch per
op (about 1 us: Numba re-types every array argument on each call).

The driver is written as a small module under ``NBDL_CACHE_DIR`` named by a
hash of its source and of the kernel modules it imports, so Numba's on-disk
cache reuses the compiled code across processes, and a change to any kernel
file gives a new module."""
import hashlib
import importlib.util
import os
import sys

import numpy as np

from .. import compile_log, config


def _identity(fn):
    """``(module, qualname)`` naming a Numba dispatcher, or None for anything
    else (a CUDA launcher, a Python function)."""
    py = getattr(fn, "py_func", None)
    if py is None or not hasattr(fn, "compile"):
        return None
    return py.__module__, py.__qualname__


def _scalar_src(v):
    # Typed constructors, not bare literals: Numba would otherwise type each
    # literal as Literal[int](v) and compile a kernel per distinct value.
    if isinstance(v, (bool, np.bool_)):
        return "np.bool_(True)" if v else "np.bool_(False)"
    if isinstance(v, np.integer):
        return f"np.{np.dtype(type(v)).name}({int(v)})"
    if isinstance(v, int):
        return f"np.int64({v})"
    if isinstance(v, np.floating):
        return f"np.{np.dtype(type(v)).name}({float(v)!r})"
    if isinstance(v, float):
        return f"np.float64({v!r})"
    return None


def _stamp(modules):
    h = hashlib.sha256()
    for m in sorted(modules):
        f = getattr(sys.modules.get(m), "__file__", None)
        if f and os.path.exists(f):
            st = os.stat(f)
            h.update(f"{m}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def generate(steps, ext_ids, arena_view, ext_sizes=None):
    """Source of a driver for ``steps`` (Prepared records).  ``ext_ids``:
    entry ids passed as arguments, in order (``ext_sizes``: their element
    counts); ``arena_view(id)`` gives ``(offset, dtype)`` of a planned id.
    Returns (source, modules) or None when a kernel cannot be called from
    generated code."""
    kernels, names, lines = {}, {}, []
    ext_pos = {i: k for k, i in enumerate(ext_ids)}
    for s in steps:
        where = _identity(s.fn)
        if where is None:
            return None
        if where not in names:
            names[where] = f"k{len(names)}"
            kernels[names[where]] = s.fn
        args = []
        for i, view in zip(s.ids, s.views):
            shape = tuple(int(d) for d in view.shape)
            if i in ext_pos:
                k = ext_pos[i]
                n = int(np.prod(shape, dtype=np.int64))
                if ext_sizes is not None and n != ext_sizes[k]:     # a prefix (Launch.args)
                    args.append(f"x{k}.reshape(-1)[:{n}].reshape({shape!r})")
                else:
                    args.append(f"x{k}.reshape({shape!r})")
            else:
                off, dt = arena_view(i)
                n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
                args.append(f"arena[{off}:{off + n}].view(np.{np.dtype(dt).name}).reshape({shape!r})")
        for v in s.scalars:
            src = _scalar_src(v)
            if src is None:
                return None
            args.append(src)
        lines.append(f"    {names[where]}({', '.join(args)})")
    params = ", ".join(["arena"] + [f"x{k}" for k in range(len(ext_ids))])
    # The kernels are injected as module globals before compiling (generated
    # kernels cannot be imported by name); their identities are written into
    # the source so that the file, and Numba's cache of it, changes with them.
    head = ["import numpy as np", "from numba import njit", ""]
    for (mod, qual), alias in names.items():
        head.append(f"{alias} = None  # {mod}.{qual}")
    src = "\n".join(head) + "\n\n\n@njit(cache=True, nogil=True)\ndef driver(" + params + "):\n"
    src += "\n".join(lines or ["    pass"]) + "\n    return 0\n"
    return src, kernels


def load(src, kernels):
    modules = {k.py_func.__module__ for k in kernels.values()}
    key = hashlib.sha256((src + _stamp(modules)).encode()).hexdigest()[:20]
    d = os.path.join(config.cache_dir(), "drivers")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"nbdl_driver_{key}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(src)
        os.replace(tmp, path)
    name = f"nbdl_driver_{key}"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.__dict__.update(kernels)
        sys.modules[name] = mod
    return mod.driver


class Native:
    """A driver for one schedule, generated but not necessarily compiled:
    ``ok`` says whether the schedule can be driven natively, ``cached()``
    whether Numba's on-disk cache already holds its code for this CPU,
    ``build()`` compiles (or loads) it and returns the runner,
    ``build_in_background(done)`` does that in a daemon thread.

    Parameters
    ----------
    steps : list of Prepared
        The schedule's kernel calls, in order.
    ext_ids : list of int
        Entry ids passed to the driver as arguments (not in the arena).
    arena : array
        The executor's arena.
    ext_arrays : list of array
        The arrays of ``ext_ids``, in order.
    arena_view : callable
        ``arena_view(id) -> (offset, dtype)`` of a planned entry.
    """

    def __init__(self, steps, ext_ids, arena, ext_arrays, arena_view):
        gen = generate(steps, ext_ids, arena_view, [a.size for a in ext_arrays]) if steps else None
        self.ok = gen is not None
        self._gen = gen
        self._args = (arena,) + tuple(ext_arrays)
        self._fn = None
        self._sig = None

    def _dispatcher(self):
        if self._fn is None:
            import numba
            self._fn = load(*self._gen)
            self._sig = tuple(numba.typeof(a) for a in self._args)
        return self._fn

    def cached(self):
        fn = self._dispatcher()
        return self._sig in fn.overloads or compile_log._index_has(fn, self._sig)

    def build(self):
        fn = self._dispatcher()
        fn.compile(self._sig)
        args = self._args

        def run():
            fn(*args)
        run.boxed_arrays = len(args)
        run.native = True
        return run

    def build_in_background(self, done, n_steps):
        """Compile in a daemon thread and call ``done(runner)`` when ready; a
        failure leaves the Python loop in place (and is logged at debug level)."""
        compile_log.info("compiling a native driver for a schedule of %d steps in the "
                         "background (NBDL_DRIVER=0 turns this off)", n_steps)
        compile_log.in_background(lambda: done(self.build()), "nbdl-driver")
