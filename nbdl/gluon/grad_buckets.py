"""Gradient buckets: a distributed Trainer's parameters' gradients laid out
in contiguous slabs, each reduced over the ranks by one allreduce, started
while backward still runs.

Layout.  Parameters' gradient buffers are the executor's *external* arrays
(bound by reference, never planned), so the slab is made here, not by the
planner: the trainable parameters, last one first (backward writes the
gradients of the last layers first), are packed per dtype into buckets of at
most ``bucket_bytes`` (one parameter per bucket when it is larger); each
bucket is one host array and each parameter's gradient becomes a view of its
slice (its values kept; ``autograd.mark_variables`` is redone).  A
hybridized block binds gradients by reference, so its next call rebinds its
executor once to the views, and from then on backward writes straight into
the slabs.

Overlap.  The buckets listen to gradient writes (``autograd.engine``'s
listeners).  A hybridized block's backward reports each parameter's
gradient right after the step that writes it (``Executor.backward``'s
``grad_ready``, the schedule cut after that step); once every gradient of a
bucket has been written, its ``Iallreduce`` starts, into a receive slab of
its own (the gradients stay readable and writable meanwhile), and the rest
of backward runs while MPI moves it; later reports poll the started ones
(``Test``) so that MPI progresses.  ``reduce()`` (at ``Trainer.step`` /
``allreduce_grads``) starts the buckets not started yet, waits for all, and
copies each total into its slab.  A gradient written again after its bucket
started (a block called twice before one backward, a second backward
before the step, ``grad_req='add'``) makes that bucket *dirty*: its early
result is dropped and it is reduced again from the final values.  Every
rank runs the same program, so every rank starts, re-reduces and waits for
the same buckets in the same order, as MPI requires.

``NBDL_DIST_OVERLAP=0`` turns the listening off: every bucket then starts
in ``reduce()``.

Stats.  ``stats`` counts the seconds spent waiting in ``reduce`` (what
communication did not hide behind backward) and the buckets started early.
"""
import time

import numpy as np

from .. import collective, config
from ..autograd import engine as _engine
from ..autograd import mark_variables
from ..ndarray import NDArray


class _Bucket:
    __slots__ = ("dtype", "members", "slab", "recv", "pending", "seen", "dirty", "send",
                 "index")

    def __init__(self, index, dtype):
        self.index = index
        self.dtype = dtype
        self.members = []            # (parameter, offset, size)
        self.slab = self.recv = self.pending = self.send = None
        self.seen = set()
        self.dirty = False

    @property
    def nbytes(self):
        return sum(n for _, _, n in self.members) * self.dtype.itemsize


class GradBuckets:
    """The buckets of a list of parameters (see the module's description).

    Parameters
    ----------
    params : list of Parameter
        Trainable parameters, each on one CPU device, in the trainer's order.
    world : nbdl.collective.World
        The job.
    bucket_bytes : int
        The most bytes of gradients in one bucket.
    compression : TwoBitCompression, optional
        Quantize each bucket (with a residual per bucket) before it is sent.
    prescale : float, default 1.0
        Multiplies each bucket before the sum (Horovod's
        ``gradient_predivide_factor``).
    """

    def __init__(self, params, world, bucket_bytes, compression=None, prescale=1.0):
        self._world = world
        self._params = list(params)
        self._compression = compression
        self._prescale = prescale
        self._buckets = []
        self._owner = {}             # id(gradient NDArray) -> (that NDArray, its bucket)
        self.stats = {"wait_s": 0.0, "steps": 0, "early": 0, "buckets": 0, "bytes": 0}
        open_by_dtype = {}
        for p in reversed(self._params):
            dtype = np.dtype(p.dtype)
            size = int(np.prod(p.shape))
            b = open_by_dtype.get(dtype)
            if b is None or (b.members and (b.nbytes + size * dtype.itemsize) > bucket_bytes):
                b = open_by_dtype[dtype] = _Bucket(len(self._buckets), dtype)
                self._buckets.append(b)
            offset = sum(n for _, _, n in b.members)
            b.members.append((p, offset, size))
        for b in self._buckets:
            self._lay_out(b)
        self.stats["buckets"] = len(self._buckets)
        self.stats["bytes"] = sum(b.nbytes for b in self._buckets)
        self._listening = config.dist_overlap()
        if self._listening:
            _engine.add_grad_listener(self._on_write)

    def _lay_out(self, b):
        total = sum(n for _, _, n in b.members)
        b.slab = np.zeros(total, b.dtype)
        b.recv = np.empty(total, np.float32 if b.dtype == np.float16 else b.dtype)
        for p, offset, size in b.members:
            old = p.list_grad()[0]
            view = b.slab[offset:offset + size].reshape(p.shape)
            view[...] = old.asnumpy()
            grad = NDArray(view, old.device)
            grad._fresh_grad = old._fresh_grad
            grad._written_in = old._written_in
            p._grad = [grad]
            mark_variables(p._data, p._grad, p.grad_req)
            self._owner[id(grad)] = (grad, b)

    def __repr__(self):
        return (f"<GradBuckets: {len(self._buckets)} buckets, "
                f"{sum(b.nbytes for b in self._buckets) / 2**20:.1f} MiB>")

    @property
    def buckets(self):
        """``[(dtype, nbytes, [parameter names])]``, in reduction order."""
        return [(b.dtype, b.nbytes, [p.name for p, _, _ in b.members]) for b in self._buckets]

    def valid(self, params):
        """Whether these buckets still hold ``params``' gradients (a
        parameter cast, moved or re-initialized gets new gradient arrays,
        and the trainer then makes new buckets).

        Parameters
        ----------
        params : list of Parameter
            The trainer's trainable parameters.
        """
        if [id(p) for p in params] != [id(p) for p in self._params]:
            return False
        return all(p._grad is not None and len(p._grad) == 1
                   and self._owner.get(id(p._grad[0]), (None,))[0] is p._grad[0] for p in params)

    def close(self):
        """Stop listening (the trainer makes new buckets)."""
        if self._listening:
            _engine.remove_grad_listener(self._on_write)
        for b in self._buckets:
            if b.pending is not None:
                b.pending.wait()
                b.pending = None

    # -- during backward ---------------------------------------------------------
    def _on_write(self, grad):
        owner = self._owner.get(id(grad))
        if owner is None or owner[0] is not grad:
            return
        b = owner[1]
        if b.pending is not None:
            b.dirty = True           # written again after its reduction started
        else:
            b.seen.add(id(grad))
            if len(b.seen) == len(b.members) and b.dtype != np.float16:
                self._start(b)
                self.stats["early"] += 1
        for other in self._buckets:      # let MPI progress what is under way
            if other.pending is not None:
                other.pending.test()

    def _start(self, b):
        send = b.slab
        if self._compression is not None:
            send = self._compression.compress(("bucket", b.index), 0, b.slab)
        elif b.dtype == np.float16:
            send = b.slab.astype(np.float32)
        if self._prescale != 1.0:
            send = send * send.dtype.type(self._prescale)
        b.send = send                    # kept alive until the reduction completes
        b.pending = collective.iallreduce(send, b.recv, f"gradient bucket {b.index}",
                                          comm=self._world.grads, world=self._world)

    # -- at the step ------------------------------------------------------------------
    def reduce(self):
        """Sum every bucket over the ranks into the parameters' gradients
        (start those not started, wait for all, redo the dirty ones)."""
        for b in self._buckets:
            if b.pending is None:
                self._start(b)
        t0 = time.perf_counter()
        redo = []
        for b in self._buckets:
            b.pending.wait()
            if b.dirty:
                redo.append(b)
        for b in redo:                   # same buckets on every rank: same program
            b.pending = None
            self._start(b)
            b.pending.wait()
        self.stats["wait_s"] += time.perf_counter() - t0
        self.stats["steps"] += 1
        for b in self._buckets:
            b.slab[...] = b.recv
            b.pending = b.send = None
            b.seen.clear()
            b.dirty = False
