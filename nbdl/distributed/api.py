"""The Horovod-style API (``import nbdl.distributed as hvd``): ``init``,
``rank``, ``size``, ``local_rank``, ``local_size``, ``allreduce(_)``,
``allgather``, ``broadcast(_)``, ``broadcast_parameters``, on NDArrays,
as ``horovod.mxnet`` has them, over ``nbdl.collective``.

Collectives are matched by call order (as MPI's), not by ``name``: every
rank must make the same calls in the same order; ``name`` and ``priority``
are accepted for Horovod's signatures and name the call in the watchdog's
messages."""
import numpy as np

from .. import collective
from .._docs import shared_doc
from ..errors import NbdlError
from ..ndarray import NDArray
from ..ndarray.creation import from_host


def init(comm=None):
    """Start the distributed job (MPI), pin this rank's threads and arm the
    abort-on-error hook; safe to call more than once.

    Parameters
    ----------
    comm : None
        Accepted for Horovod's signature; nbdl always uses the whole
        ``MPI.COMM_WORLD``.
    """
    if comm is not None:
        raise NbdlError("nbdl.distributed.init: comm= (a subset of the ranks) is not supported; "
                        "every rank of the job takes part")
    collective.init("nbdl.distributed.init()")


def _world(what):
    w = collective.world()
    if w is None:
        raise collective.DistributedError(f"nbdl.distributed.{what}: the job has not been "
                                          f"initialized; call nbdl.distributed.init() first")
    return w


def is_initialized():
    """Whether ``init`` (or a distributed kvstore) has started the job."""
    return collective.world() is not None


def rank():
    """This process's rank, 0 .. size() - 1."""
    return _world("rank()").rank


def size():
    """How many ranks the job has."""
    return _world("size()").size


def local_rank():
    """This process's index among the ranks of its machine."""
    return _world("local_rank()").local_rank


def local_size():
    """How many ranks run on this machine."""
    return _world("local_size()").local_size


def barrier():
    """Wait for every rank (with the watchdog, ``NBDL_DIST_TIMEOUT``)."""
    collective.barrier("nbdl.distributed.barrier()", world=_world("barrier()"))


# Horovod's arguments of every collective
_NAMING = """
name : str, optional
    A name for messages.
priority : int, default 0
    Accepted for Horovod's signature.
"""
_REDUCE = """
average : bool, default True
    Divide the sum by ``size()``.""" + _NAMING.rstrip("\n") + """
prescale_factor : float, default 1.0
    Multiplies the values before the sum.
postscale_factor : float, default 1.0
    Multiplies the result.
"""


def _host(tensor, what):
    if not isinstance(tensor, NDArray):
        raise NbdlError(f"nbdl.distributed.{what}: expected an NDArray, got "
                        f"{type(tensor).__name__}")
    return np.ascontiguousarray(tensor.asnumpy())


def _reduce(tensor, average, what, prescale_factor, postscale_factor):
    w = _world(what)
    host = _host(tensor, what)
    dtype = host.dtype
    buf = host.astype(np.float32 if dtype == np.float16 else dtype, copy=True)
    if prescale_factor != 1.0:
        buf *= buf.dtype.type(prescale_factor)
    collective.allreduce(buf, what, world=w)
    scale = postscale_factor / w.size if average else postscale_factor
    if scale != 1.0:
        if np.issubdtype(buf.dtype, np.integer):
            buf = buf // w.size if average else buf * int(postscale_factor)
        else:
            buf *= buf.dtype.type(scale)
    return buf.astype(dtype, copy=False)


@shared_doc(reduce=_REDUCE)
def allreduce(tensor, average=True, name=None, priority=0, prescale_factor=1.0,
              postscale_factor=1.0):
    """A new NDArray: ``tensor`` summed (or averaged) over the ranks.

    Parameters
    ----------
    tensor : NDArray
        This rank's values.
    {reduce}
    """
    what = f"allreduce({name or 'tensor'})"
    out = _reduce(tensor, average, what, prescale_factor, postscale_factor)
    return from_host(out, tensor.device)


@shared_doc(reduce=_REDUCE)
def allreduce_(tensor, average=True, name=None, priority=0, prescale_factor=1.0,
               postscale_factor=1.0):
    """``allreduce`` written into ``tensor``; returns it.

    Parameters
    ----------
    tensor : NDArray
        This rank's values, replaced by the result.
    {reduce}
    """
    what = f"allreduce_({name or 'tensor'})"
    tensor[...] = _reduce(tensor, average, what, prescale_factor, postscale_factor)
    return tensor


@shared_doc(naming=_NAMING)
def allgather(tensor, name=None, priority=0):
    """A new NDArray: every rank's ``tensor`` concatenated along the first
    axis in rank order (first dimensions may differ, the others may not).

    Parameters
    ----------
    tensor : NDArray
        This rank's part.
    {naming}
    """
    what = f"allgather({name or 'tensor'})"
    out = collective.allgather(_host(tensor, what), what, world=_world(what))
    return from_host(out, tensor.device)


@shared_doc(naming=_NAMING)
def broadcast(tensor, root_rank, name=None, priority=0):
    """A new NDArray holding rank ``root_rank``'s ``tensor`` on every rank.

    Parameters
    ----------
    tensor : NDArray
        The value (used on ``root_rank``; the shape and dtype must agree on
        every rank).
    root_rank : int
        The rank whose value wins.
    {naming}
    """
    what = f"broadcast({name or 'tensor'})"
    host = _host(tensor, what).copy()
    collective.broadcast(host, root_rank, what, world=_world(what))
    return from_host(host, tensor.device)


@shared_doc(naming=_NAMING)
def broadcast_(tensor, root_rank, name=None, priority=0):
    """``broadcast`` written into ``tensor``; returns it.

    Parameters
    ----------
    tensor : NDArray
        The value, replaced by rank ``root_rank``'s.
    root_rank : int
        The rank whose value wins.
    {naming}
    """
    tensor[...] = broadcast(tensor, root_rank, name, priority).asnumpy()
    return tensor


def broadcast_parameters(params, root_rank=0, prefix=None):
    """Make every rank's parameters equal to rank ``root_rank``'s (call it
    after ``initialize``, before training).  Parameters whose initialization
    is deferred to the first forward pass are broadcast when it happens
    (every rank runs that pass, as Horovod's version requires).

    Parameters
    ----------
    params : dict or ParameterDict
        ``block.collect_params()`` (or ``{name: Parameter}``; a dict of
        NDArrays is broadcast in place too).  Processed in sorted name order.
    root_rank : int, default 0
        The rank whose values win.
    prefix : str, optional
        Prepended to names in messages.
    """
    if not hasattr(params, "items"):
        raise NbdlError(f"broadcast_parameters: params must be a dict or a ParameterDict, got "
                        f"{type(params).__name__}")
    w = _world("broadcast_parameters()")
    for name in sorted(params.keys()):
        p = params[name]
        label = f"{prefix or ''}{name}"
        if isinstance(p, NDArray):
            broadcast_(p, root_rank, label)
            continue
        if p._data is None and p._deferred_init:
            _broadcast_on_init(p, root_rank, label, w)
            continue
        for arr in p.list_data():
            host = np.ascontiguousarray(arr.asnumpy())
            collective.broadcast(host, root_rank, f"broadcast_parameters({label})", world=w)
            arr[...] = host


def _broadcast_on_init(param, root_rank, label, w):
    """Broadcast ``param``'s value right after its deferred initialization."""
    original = param._init_impl

    def init_then_broadcast(data, devices):
        host = np.ascontiguousarray(data.asnumpy() if isinstance(data, NDArray)
                                    else np.asarray(data, dtype=param.dtype))
        collective.broadcast(host, root_rank, f"broadcast_parameters({label})", world=w)
        del param._init_impl           # back to the class's method
        original(host, devices)
    param._init_impl = init_then_broadcast
