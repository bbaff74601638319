"""LayerNorm's prepare-time views, shared by the CPU and CUDA kernels."""
import math


def layer_norm_views(attrs, shape):
    """``(outer, n, inner)``, ``(outer, inner)`` and ``(n,)``."""
    shape = tuple(shape)
    a = attrs["axis"] + len(shape) if attrs["axis"] < 0 else attrs["axis"]
    outer, inner = math.prod(shape[:a]), math.prod(shape[a + 1:])
    return (outer, int(shape[a]), inner), (outer, inner), (int(shape[a]),)
