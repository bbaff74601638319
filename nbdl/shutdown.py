"""Process exit without the interpreter's last cyclic collections.

At exit CPython clears its modules and runs full collections of the cyclic
garbage collector over every object still alive.  With Numba's typing and
lowering registries, nbdl's op table and a model's executors loaded that is
hundreds of thousands of objects: a short script that trains a two-layer MLP
spent 0.19 s of its 0.70 s leaving the interpreter (perf/README.md, "Process
exit").  Those collections only find cycles that die with the process
anyway, so ``import nbdl`` registers an exit handler that moves every object
to the permanent generation (``gc.freeze``) just before the interpreter
finalises; reference counting still frees what it frees, and files, sockets
and temporary directories closed by ``with``, ``close()``, ``atexit`` or
``weakref.finalize`` are unaffected.  What changes: an object alive at exit
that only a reference cycle keeps (and nothing closed) is not finalised —
CPython never promised ``__del__`` for objects alive at exit, but a file
left open in such a cycle then loses its unflushed buffer.
``NBDL_EXIT_COLLECT=1`` keeps the collections."""
import atexit
import gc

from . import config


def _freeze_at_exit():
    if not config.exit_collect():
        gc.freeze()


def install():
    """Register the exit handler (``import nbdl`` calls this; calling it again
    does not register a second one).  ``atexit`` runs handlers last-in,
    first-out, so handlers registered after ``import nbdl`` run before the
    freeze and those registered before it after; none of them needs the
    collections the freeze removes."""
    atexit.unregister(_freeze_at_exit)
    atexit.register(_freeze_at_exit)


__all__ = ["install"]
