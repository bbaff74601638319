"""SwapAxis as a transpose, shared by the CPU and CUDA kernels."""
import dataclasses

from ...ops.registry import get_op
from ...ops.swapaxis import swap_permutation


def as_transpose(call):
    """The ``transpose`` call that does what this SwapAxis call does."""
    perm = swap_permutation(call.attrs, len(call.in_shapes[0]))
    return dataclasses.replace(call, op=get_op("transpose"), attrs={"axes": perm})
