"""nbdl.array: the NDArray class (MXNet 1.x's API over a device array).

It sits below the layers that hand NDArrays out (the executor, autograd,
``nbdl.nd``) and above the imperative runtime its methods run ops through
(``nbdl.imperative``), which makes results of its inputs' class;
``storage`` holds the plain functions on device arrays its indexing,
reshaping and transfers use."""
from .ndarray import NDArray  # noqa: F401
