"""``NDArrayBase``: what the imperative runtime reads and writes on an array.

``nbdl.imperative`` (eager calls, the tape, backward) works on instances of
``NDArrayBase`` subclasses without naming their class: a call's outputs are
made of the class of its first input (or of ``out=``), and a caller whose
op has no array inputs names the class (``cls=``).  So ``nbdl.array.NDArray``,
the class users see, sits above the runtime that makes its instances, and
the runtime imports nothing from it."""
import numpy as np

from ..device import Device, as_device, cpu, gpu
from ..runner.buffers import device_scope


class NDArrayBase:
    """A device array (numpy on the CPU, a ``numba.cuda`` device array on a
    GPU), the device it lives on, and the state autograd keeps on it.

    Parameters
    ----------
    data : numpy.ndarray or numba.cuda device array
        The storage, C-contiguous; wrapped without a copy.
    device : Device or str, optional
        Where it lives (default: the CPU for numpy data, else ``gpu(0)``).
    """

    def __init__(self, data, device=None):
        if device is None:
            device = cpu() if isinstance(data, np.ndarray) else gpu(0)
        elif not isinstance(device, Device):
            device = as_device(device)
        self._data = data
        self._device = device

    def asnumpy(self):
        """A numpy copy of the data (never a view)."""
        if isinstance(self._data, np.ndarray):
            return self._data.copy()
        with device_scope(self._device):
            return self._data.copy_to_host()

    @property
    def shape(self):
        """The shape (a tuple of int)."""
        s = self._data.shape
        return s if type(s) is tuple else tuple(int(d) for d in s)

    # -- autograd's state ---------------------------------------------------
    _ag = None          # (tape node, output index) when produced by a recorded op
    _ag_var = None      # tape.Variable when marked with attach_grad / mark_variables
    # Gradient-buffer state, by the accumulation policy (``engine.store_grad``):
    # the backward pass that last wrote this array as a gradient, and whether
    # it was written since the Trainer's last step.
    _written_in = None
    _grad_fresh = False

    @property
    def _fresh_grad(self):
        """Whether the gradient was written by a backward pass since the
        flag was last cleared (MXNet's ``NDArray._fresh_grad``).  On a
        variable (``attach_grad``) it is its gradient buffer's flag, so
        ``x._fresh_grad`` and ``x.grad._fresh_grad`` are one flag."""
        v = self._ag_var
        return (v.grad if v is not None else self)._grad_fresh

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        v = self._ag_var
        (v.grad if v is not None else self)._grad_fresh = bool(state)


def wrap(cls, data, device):
    """A new ``cls`` (an ``NDArrayBase`` subclass) over ``data`` on ``device``,
    without ``__init__``'s checks (the runtime's own arrays).

    Parameters
    ----------
    cls : type
        The array class.
    data : device array
        The storage.
    device : Device
        Its device.
    """
    r = _new(cls)
    r._data = data
    r._device = device
    return r


_new = object.__new__
