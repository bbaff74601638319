"""CPU kernel of SwapAxis: the transpose kernel with the equivalent axes."""

from . import shape
from ..shared.swapaxis import as_transpose


def prepare_swapaxis(call):
    return shape.prepare_transpose(as_transpose(call))
