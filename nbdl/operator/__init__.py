"""Operators written in Python: MXNet 1.x's ``mx.operator``.

    class Sqr(nbdl.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @nbdl.operator.register("sqr")
    class SqrProp(nbdl.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Sqr()

    y = nbdl.nd.Custom(x, op_type="sqr")            # or nbdl.sym.Custom(data, op_type="sqr")

``custom.py``: CustomOp, CustomOpProp, register and the eager ``nd.Custom``;
``python_op.py``: the deprecated PythonOp / NumpyOp / NDArrayOp on top of
them; ``registry.py``: ``get_all_registered_operators`` and
``get_operator_arguments``.
"""
from .custom import Custom, CustomOp, CustomOpProp, register  # noqa: F401
from .python_op import NDArrayOp, NumpyOp, PythonOp  # noqa: F401
from .registry import (OperatorArguments, get_all_registered_operators,  # noqa: F401
                       get_operator_arguments)

__all__ = ["CustomOp", "CustomOpProp", "register", "PythonOp", "NumpyOp", "NDArrayOp",
           "get_all_registered_operators", "get_operator_arguments", "OperatorArguments"]
