"""Type and lower every CUDA kernel the simulated tests launch, for a real GPU, on a machine without one.

Numba's CUDA simulator runs kernels as Python: it never types them, so a
kernel that cannot compile for a GPU (an atomic on float16, a Python feature
CUDA code lacks, a call Numba's CUDA target does not know) passes every
simulated test.  This tool finds those without a GPU, in two steps:

1. ``record``: runs pytest (default: the tests marked ``cuda``) in the
   simulator with ``NBDL_SIM_RECORD_LAUNCHES=<file>``; tests/conftest.py then
   writes, for every distinct simulated launch, the kernel (by module and
   name, or by value for kernels made by factories: code, closure and the
   globals it reads) and its argument types.
2. ``check``: in a process without the simulator, rebuilds each kernel and
   runs Numba's CUDA front end on it for compute capability 9.0 (typing and
   lowering to LLVM IR: ``numba.cuda.compiler.compile_cuda``; no GPU, driver
   or NVRTC needed), and prints the failures.

Usage (from the repository root)::

    python tools/cuda_compile_check.py record /tmp/launches.pkl [pytest args...]
    python tools/cuda_compile_check.py check /tmp/launches.pkl

The recorder itself lives in tests/cuda_sim.py (``record_launches``).
"""
import os
import pickle
import subprocess
import sys
import time
import types as pytypes
from importlib import import_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record(path, pytest_args):
    env = dict(os.environ, NBDL_SIM_RECORD_LAUNCHES=os.path.abspath(path),
               NUMBA_ENABLE_CUDASIM="1", NBDL_TEST_CUDA="0")
    args = pytest_args or ["-m", "cuda", "."]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir=..",
           "-c", "../pyproject.toml"] + args
    return subprocess.call(cmd, cwd=os.path.join(ROOT, "tests"), env=env)


def _decode(v, memo):
    tag = v[0]
    if tag == "value":
        return pickle.loads(v[1])
    if tag == "module":
        return import_module(v[1])
    if tag == "ref":
        obj = import_module(v[1])
        for part in v[2].split("."):
            obj = getattr(obj, part)
        return obj
    if tag == "tuple":
        return tuple(_decode(x, memo) for x in v[1])
    if tag == "cudajit":
        from numba import cuda
        key = id(v)
        if key not in memo:
            memo[key] = cuda.jit(device=v[1])(_rebuild(v[2], memo))
        return memo[key]
    if tag == "pyfunc":
        return _rebuild(v[1], memo)
    raise ValueError(f"cannot rebuild {v!r}")


def _rebuild(desc, memo):
    """A Python function from ``cuda_sim``'s description (by reference or by value)."""
    if desc[0] == "ref":
        fn = _decode(desc, memo)
        return getattr(fn, "py_func", fn)
    _, code, name, module, glob, closure, defaults = desc
    import marshal
    if glob is None:                                   # the function's module is its globals
        g = vars(import_module(module))
    else:
        g = {"__builtins__": __builtins__, "__name__": module}
        g.update({k: _decode(x, memo) for k, x in glob})
    cells = tuple(pytypes.CellType(_decode(c, memo)) for c in closure)
    return pytypes.FunctionType(marshal.loads(code), g, name,
                                _decode(defaults, memo) if defaults else None, cells or None)


def check(path):
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    from numba.core import types
    from numba.cuda import compiler
    from numba.cuda import dispatcher

    class _Hopper:
        compute_capability = (9, 0)
    # device functions compile for the current device's capability: there is
    # none here, so they compile for the kernels' (an H100/H200's)
    dispatcher.get_current_device = _Hopper
    import nbdl.kernels.cuda  # noqa: F401  (what nbdl registers with the CUDA target)
    with open(path, "rb") as f:
        launches = pickle.load(f)
    failures, memo, t0 = [], {}, time.time()
    for (desc, argtypes), where in launches.items():
        label = f"{desc[1] + '.' + desc[2] if desc[0] == 'ref' else desc[2]}{tuple(map(str, argtypes))}"
        try:
            if desc[0] == "unrecordable":
                raise RuntimeError(f"the recorder could not describe it: {desc[1]}")
            fn = _rebuild(desc, memo)
            compiler.compile_cuda(fn, types.void, argtypes, cc=(9, 0))
        except Exception as e:                         # report every kernel that fails
            first = str(e).strip().splitlines()
            failures.append((label, where, type(e).__name__, " ".join(first[:3])[:400]))
    print(f"{len(launches)} (kernel, signature) pairs compiled in {time.time() - t0:.0f} s; "
          f"{len(failures)} failed")
    for label, where, kind, msg in failures:
        print(f"\nFAILED {label}\n  first launched by {where}\n  {kind}: {msg}")
    return 1 if failures else 0


def main(argv):
    if len(argv) < 2 or argv[0] not in ("record", "check"):
        print(__doc__)
        return 2
    if argv[0] == "record":
        return record(argv[1], argv[2:])
    return check(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
