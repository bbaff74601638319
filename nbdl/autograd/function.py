"""``autograd.Function``: a custom differentiable operation written in Python.

    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nbdl.nd.exp(-x))
            self.save_for_backward(y)
            return y
        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)
"""
from ..array import NDArray
from ..errors import NbdlError
from ..imperative import state
from ..imperative.tape import record_custom


class Function:
    """A differentiable operation written by the user, as MXNet's
    ``autograd.Function``: subclass it, define ``forward(*inputs)`` and
    ``backward(*output_grads)`` on NDArrays, and call an instance on its
    inputs inside ``autograd.record()``; ``backward`` returns one gradient an
    input.  An instance is called once (make a new one a call).
    """
    def __init__(self):
        self.saved_tensors = ()
        self._used = False

    def save_for_backward(self, *arrays):
        """Keep ``arrays`` for ``backward`` (as ``self.saved_tensors``).

        Parameters
        ----------
        *arrays : NDArray
            What ``backward`` needs from the forward.
        """
        self.saved_tensors = arrays

    def forward(self, *inputs):
        """The operation's outputs from its inputs; every subclass defines it.

        Parameters
        ----------
        *inputs : NDArray
            The inputs the instance was called on.
        """
        raise NbdlError(f"{type(self).__name__}: a Function subclass must define forward()")

    def backward(self, *output_grads):
        """The inputs' gradients from the outputs' gradients (one an input,
        in order); every subclass defines it.

        Parameters
        ----------
        *output_grads : NDArray
            One gradient an output of ``forward``.
        """
        raise NbdlError(f"{type(self).__name__}: a Function subclass must define backward()")

    def __call__(self, *inputs):
        if self._used:
            raise NbdlError(f"{type(self).__name__}: a Function instance can be called once; "
                            f"create a new instance per call")
        self._used = True
        with state.pause(state.is_training()):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if state.is_recording():
            nd_inputs = [a for a in inputs if isinstance(a, NDArray)]
            positions = [i for i, a in enumerate(inputs) if isinstance(a, NDArray)]

            def backward_fn(out_grads):
                with state.pause(state.is_training()):
                    res = self.backward(*out_grads)
                res = [res] if isinstance(res, NDArray) or res is None else list(res)
                if len(res) != len(inputs):
                    raise NbdlError(f"{type(self).__name__}.backward returned {len(res)} "
                                    f"gradients for {len(inputs)} inputs")
                return [res[i] for i in positions]
            record_custom(nd_inputs, outs, backward_fn, name=type(self).__name__)
        return outputs
