"""CUDA kernel of SwapAxis: the transpose kernel with the equivalent axes."""
from ..shared.swapaxis import as_transpose
from . import shape


def prepare_swapaxis(call):
    return shape.prepare_transpose(as_transpose(call))
