"""The strided walk of the shape family, written once for both devices:
flat position ``k`` of a walk (C order over ``n0..n7``) to its element
offset ``base + sum i_d * s_d``.  The CPU kernels compile it with ``njit``,
the CUDA ones with ``cuda.jit(device=True)``; the walks themselves come
from ``nbdl.ops.shape.strided_plan``."""


def walk_offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7, s0, s1, s2, s3, s4, s5, s6, s7):
    """Offset of flat walk position ``k`` (C order over n0..n7)."""
    off = base
    off += (k % n7) * s7
    k //= n7
    off += (k % n6) * s6
    k //= n6
    off += (k % n5) * s5
    k //= n5
    off += (k % n4) * s4
    k //= n4
    off += (k % n3) * s3
    k //= n3
    off += (k % n2) * s2
    k //= n2
    off += (k % n1) * s1
    k //= n1
    return off + k * s0
