"""A compile-pool worker (``python -m nbdl.executor.compile_worker``): reads
the pickled work list of ``nbdl.executor.compile_pool`` from stdin and, in
its order, claims each kernel no other process has claimed, compiles it into
Numba's on-disk cache and marks it done.  The callees a compilation meets are
claimed the same way (through the compile hook): one the work list names and
another process is compiling is waited for and loaded from the cache.
Nothing else: it runs no kernel and writes nothing but the cache and its
marker files."""
import importlib
import os
import pickle
import sys


def _rebuild(desc):
    module, builder, args = desc
    mod = importlib.import_module(module)
    if builder is None:
        return getattr(mod, args)
    return getattr(mod, builder)(*args)


def main():
    """Compile what stdin's work list holds (see the module docstring)."""
    work = pickle.loads(sys.stdin.buffer.read())
    from ..kernels.shared.jit import set_compile_hook
    from .compile_claims import Claims
    claims = Claims(work["dir"], [key for key, _, _ in work["items"]])
    parent = os.getppid()

    def gone():                         # the pool's process died: stop waiting for its claims
        return os.getppid() != parent

    set_compile_hook(lambda fn, sig: claims.hook(fn, sig, gone=gone))
    for key, desc, sig in work["items"]:
        if not os.path.isdir(claims.dir) or gone():
            return                      # the pool is gone
        if not claims.take(key) or claims.is_done(key):
            continue                    # another process has it
        try:
            _rebuild(desc).compile(sig)     # marks it done through the hook
        except Exception:               # the claimer waits for .done, then compiles itself
            pass
        claims.mark_done(key)


if __name__ == "__main__":
    main()
