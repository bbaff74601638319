"""MXNet 1.x's deprecated Python operators (``PythonOp``, ``NumpyOp``,
``NDArrayOp``), kept for old code: ``op.get_symbol(x)`` (or ``op(x)``) is a
``Custom`` node of an operator type registered for this instance, so such a
symbol runs in this process only (as MXNet's, which held a pointer to it).
``NumpyOp`` computes on numpy arrays (views of the buffers on the CPU,
copies on a GPU) in float32, ``NDArrayOp`` on NDArrays."""
import warnings

import numpy as np

from .. import symbol
from .custom import CustomOp, CustomOpProp, register

__all__ = ["PythonOp", "NumpyOp", "NDArrayOp"]


class PythonOp:
    """Base class of the deprecated Python operators.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward reads the outputs' gradients (False for losses).
    """
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn(f"{type(self).__name__} has been deprecated. Please use CustomOp")

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A ``Custom`` symbol computed by this operator.

        Parameters
        ----------
        *args, **kwargs
            The input symbols (by position or by argument name) and ``name``.
        """
        op_type = f"_python_op_{id(self)}"
        register(op_type)(_prop_class(self))
        PythonOp._ref_holder.append(self)     # the registration refers to it, as MXNet's
        return symbol.Custom(*args, op_type=op_type, **kwargs)

    def forward(self, in_data, out_data):
        """Compute the outputs (the default copies the first input).

        Parameters
        ----------
        in_data, out_data : list of arrays
            The inputs and the outputs to write.
        """
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Compute the inputs' gradients (the default writes 1).

        Parameters
        ----------
        out_grad, in_data, out_data, in_grad : list of arrays
            The outputs' gradients, inputs, outputs and the gradients to write.
        """
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(in_shape, out_shape)``; the default gives the output the first
        input's shape.

        Parameters
        ----------
        in_shape : list of list of int
            The inputs' shapes.
        """
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """The outputs' names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """The inputs' names (default ``['data']``)."""
        return ["data"]

    def need_top_grad(self):
        """Whether backward reads the outputs' gradients."""
        return self.need_top_grad_

    def _host(self, arrays):
        return arrays

    def _types(self, in_type, n_out):
        return in_type, [in_type[0]] * n_out


class NumpyOp(PythonOp):
    """A deprecated Python operator computing on numpy arrays (float32).

    Parameters
    ----------
    need_top_grad : bool
        Whether backward reads the outputs' gradients.
    """

    def _types(self, in_type, n_out):
        return [np.float32] * len(in_type), [np.float32] * n_out


class NDArrayOp(PythonOp):
    """A deprecated Python operator computing on NDArrays.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward reads the outputs' gradients.
    """

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids backward reads (see ``CustomOpProp.declare_backward_dependency``).

        Parameters
        ----------
        out_grad, in_data, out_data : list of int
            Ids of the outputs' gradients, the inputs and the outputs.
        """
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


def _numpy_views(arrays):
    """numpy arrays over NDArrays (views on the CPU, copies elsewhere)."""
    return [None if a is None else (a._data if a.context.device_type == "cpu" else a.asnumpy())
            for a in arrays]


def _write_back(nds, hosts):
    for nd, host in zip(nds, hosts):
        if nd is not None and nd.context.device_type != "cpu":
            nd[:] = host


class _Compute(CustomOp):
    """A PythonOp run as a CustomOp."""

    def __init__(self, pyop):
        self.pyop = pyop
        self.numpy = isinstance(pyop, NumpyOp)

    def forward(self, is_train, req, in_data, out_data, aux):
        if not self.numpy:
            return self.pyop.forward(in_data=in_data, out_data=out_data)
        outs = _numpy_views(out_data)
        self.pyop.forward(in_data=_numpy_views(in_data), out_data=outs)
        _write_back(out_data, outs)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        if not self.numpy:
            return self.pyop.backward(out_grad=out_grad, in_data=in_data, out_data=out_data,
                                      in_grad=in_grad)
        grads = _numpy_views(in_grad)
        self.pyop.backward(out_grad=_numpy_views(out_grad), in_data=_numpy_views(in_data),
                           out_data=_numpy_views(out_data), in_grad=grads)
        _write_back(in_grad, grads)


def _prop_class(pyop):
    """A CustomOpProp subclass answering from ``pyop``."""
    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=pyop.need_top_grad())

        def list_arguments(self):
            return pyop.list_arguments()

        def list_outputs(self):
            return pyop.list_outputs()

        def infer_shape(self, in_shape):
            return pyop.infer_shape(in_shape)

        def infer_type(self, in_type):
            return pyop._types(in_type, len(pyop.list_outputs()))

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            if isinstance(pyop, NDArrayOp):
                return pyop.declare_backward_dependency(out_grad, in_data, out_data)
            return super().declare_backward_dependency(out_grad, in_data, out_data)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Compute(pyop)
    _Prop.__name__ = f"{type(pyop).__name__}Prop"
    return _Prop
