"""A compile-pool worker (``python -m nbdl.executor.compile_worker``): reads
the pickled work list of ``nbdl.executor.compile_pool`` from stdin and, in
its order, claims each kernel no other process has claimed, compiles it into
Numba's on-disk cache and marks it done.  Nothing else: it runs no kernel and
writes nothing but the cache and its marker files."""
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
    root = work["dir"]
    for key, desc, sig in work["items"]:
        path = os.path.join(root, key)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue                    # claimed by another process
        except OSError:
            return                      # the pool is gone
        try:
            _rebuild(desc).compile(sig)
        except Exception:               # the claimer waits for .done, then compiles itself
            pass
        try:
            os.close(os.open(path + ".done", os.O_CREAT | os.O_WRONLY))
        except OSError:
            return


if __name__ == "__main__":
    main()
