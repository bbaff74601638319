"""CUDA kernels.  Imported only when a GPU device is used."""
from . import _ufuncs  # noqa: F401  (numpy's rounding ufuncs in kernels: see the module)
