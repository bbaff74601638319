"""Iterators over other iterators: ``ResizeIter`` and ``PrefetchingIter``."""
import numbers
import threading

from ..errors import ArgumentError, NbdlError, ShapeError
from .base import DataBatch, DataDesc, DataIter

__all__ = ["ResizeIter", "PrefetchingIter"]


class _BatchHolder(DataIter):
    """An iterator whose ``iter_next`` stores the whole batch in
    ``current_batch``, which the getters read."""

    def getdata(self):
        """The current batch's data."""
        return self.current_batch.data

    def getlabel(self):
        """The current batch's label."""
        return self.current_batch.label

    def getindex(self):
        """The current batch's index."""
        return self.current_batch.index

    def getpad(self):
        """The current batch's pad."""
        return self.current_batch.pad


class ResizeIter(_BatchHolder):
    """An epoch of exactly ``size`` batches from another iterator.

    The wrapped iterator is reset and read again when it ends before
    ``size`` batches; an epoch that would be longer is cut.

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        Batches per epoch (non-negative).
    reset_internal : bool, optional
        Whether ``reset`` also resets ``data_iter`` (otherwise the next epoch
        continues where this one stopped).
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
            raise ArgumentError(f"ResizeIter: size must be a non-negative int, got {size!r}")
        if not hasattr(data_iter, "next"):
            raise ArgumentError(f"ResizeIter: data_iter must be a DataIter, "
                                f"got {type(data_iter).__name__}")
        self.data_iter = data_iter
        self.size = int(size)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        """Start a new epoch of ``size`` batches."""
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        """Fetch the next batch, restarting the wrapped iterator at its end."""
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise ShapeError("ResizeIter: the wrapped iterator yields no batch even "
                                 "right after reset()") from None
        self.cur += 1
        return True


class _Worker:
    """One background thread that fetches the next batch of one iterator on request."""

    def __init__(self, data_iter):
        self.data_iter = data_iter
        self.request = threading.Event()
        self.ready = threading.Event()
        self.stop = False
        self.batch = None
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name="nbdl-PrefetchingIter")
        self.thread.start()

    def _run(self):
        while True:
            self.request.wait()
            self.request.clear()
            if self.stop:
                return
            try:
                self.batch = self.data_iter.next()
            except StopIteration:
                self.batch = None
            except BaseException as e:  # handed to the consumer's thread
                self.batch, self.error = None, e
            self.ready.set()

    def fetch(self):
        self.ready.clear()
        self.request.set()

    def close(self):
        self.stop = True
        self.request.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


def _renamed(descs, mapping, what, i):
    out = []
    for x in descs:
        if not isinstance(x, DataDesc):
            x = DataDesc(*x)
        if mapping is not None:
            if x.name not in mapping:
                raise ArgumentError(f"PrefetchingIter: {what}[{i}] has no new name for "
                                    f"{x.name!r} (it maps {sorted(mapping)})")
            x = DataDesc(mapping[x.name], x.shape, x.dtype, x.layout)
        out.append(x)
    return out


class PrefetchingIter(_BatchHolder):
    """Reads the next batch of one or more iterators in background threads.

    With several iterators, each batch concatenates their data lists and
    their label lists (in the order of ``iters``); they must yield the same
    number of batches with the same padding.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators to read ahead.
    rename_data : list of dict, optional
        For the i-th iterator, ``{old name: new name}`` for every entry of
        its ``provide_data`` (None in the list keeps that iterator's names).
    rename_label : list of dict, optional
        The same for ``provide_label``.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        iters = list(iters)
        if not iters:
            raise ArgumentError("PrefetchingIter: iters must hold at least one iterator")
        for name, ren in (("rename_data", rename_data), ("rename_label", rename_label)):
            if ren is None:
                continue
            if not isinstance(ren, (list, tuple)) or len(ren) != len(iters) or not all(
                    r is None or isinstance(r, dict) for r in ren):
                raise ArgumentError(f"PrefetchingIter: {name} must be a list of {len(iters)} "
                                    f"dicts (one per iterator), got {ren!r}")
        self.n_iter = len(iters)
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        provide, _ = self.provide_data, self.provide_label  # check renames before threads start
        self.batch_size = provide[0][1][0]
        self._closed = False
        self.current_batch = None
        self._workers = [_Worker(it) for it in iters]
        for w in self._workers:
            w.fetch()

    def _descs(self, attr, rename, what):
        out = []
        for i, it in enumerate(self.iters):
            mapping = rename[i] if rename is not None else None
            out.extend(_renamed(getattr(it, attr), mapping, what, i))
        return out

    @property
    def provide_data(self):
        """The wrapped iterators' ``provide_data``, concatenated and renamed."""
        return self._descs("provide_data", self.rename_data, "rename_data")

    @property
    def provide_label(self):
        """The wrapped iterators' ``provide_label``, concatenated and renamed."""
        return self._descs("provide_label", self.rename_label, "rename_label")

    def _wait_for_reads(self):
        if self._closed:
            raise NbdlError("PrefetchingIter: the iterator was closed")
        for w in self._workers:
            w.ready.wait()

    def _wait(self):
        self._wait_for_reads()
        for w in self._workers:
            if w.error is not None:
                raise w.error

    def reset(self):
        """Wait for the pending reads, reset every iterator and read ahead again."""
        self._wait_for_reads()
        for w in self._workers:
            w.error = None
        for it in self.iters:
            it.reset()
        for w in self._workers:
            w.fetch()

    def iter_next(self):
        """Take the batches read ahead and start reading the next ones."""
        self._wait()
        batches = [w.batch for w in self._workers]
        if batches[0] is None or any(b is None for b in batches):
            if any(b is not None for b in batches):
                ended = [i for i, b in enumerate(batches) if b is None]
                raise ShapeError(f"PrefetchingIter: iterators {ended} of {self.n_iter} ended "
                                 f"before the others (they must yield the same number of "
                                 f"batches)")
            return False
        pads = [b.pad for b in batches]
        if any(p != pads[0] for p in pads):
            raise ShapeError(f"PrefetchingIter: the iterators' batches have different pads "
                             f"{pads} (they must hold the same examples)")
        self.current_batch = DataBatch(sum([list(b.data) for b in batches], []),
                                       sum([list(b.label or []) for b in batches], []),
                                       pads[0], batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for w in self._workers:
            w.fetch()
        return True

    def next(self):
        """The next merged ``DataBatch``."""
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def close(self):
        """Stop the background threads (also done when the iterator is collected)."""
        self._closed = True
        for w in getattr(self, "_workers", []):
            if not w.stop:
                w.ready.wait()
                w.close()

    def __del__(self):
        self.close()
