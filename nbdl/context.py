"""MXNet 1.x's ``mxnet.context``: ``Context`` and friends, which in nbdl are
``nbdl.device``'s (the same objects: ``nbdl.context.Context is
nbdl.Device``).

``with mx.gpu(0):`` sets the default device as in MXNet;
``current_context()`` returns it (``cpu(0)`` unless set).
``cpu_pinned(i)`` and ``cpu_shared`` contexts are plain CPU devices in nbdl
(nbdl has no pinned host memory pool; a pinned context compares equal to
``cpu(i)``).
"""
from .device import Context, Device, cpu, current_context, gpu, num_gpus  # noqa: F401


def cpu_pinned(device_id=0):
    """A CPU context for pinned host memory; nbdl gives a plain ``cpu(device_id)``.

    Parameters
    ----------
    device_id : int, default 0
        The device index (kept, as in MXNet, though there is one host).

    Returns
    -------
    Context
    """
    return Device("cpu_pinned", device_id)


__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "num_gpus", "current_context"]
