"""Generates the CUDA loops of the elementwise ops from the expressions the
CPU kernels use (``nbdl.kernels.shared.elemwise_exprs``): one ``cuda.jit``
kernel per (op, layout, dtype), made on first use, with a grid-stride loop.

``T`` (the output's scalar type) is bound as a global of each kernel, so a
float32 kernel keeps float32 constants; float16 arrays are computed in
float32 (``T`` is float32 and each load converts), as on the CPU."""
import math
import re

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import special
from ..shared.elemwise_exprs import spec_of, typed_scalars
from ..shared.elemwise_plan import size_of
from ._launch import launcher

_MAP = '''
def {name}({params}, out, {scalars}req):
{hoisted}    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
{loads}        if req == REQ_ADD:
            out[i] += {expr}
        elif req != REQ_NULL:
            out[i] = {expr}
'''

_BROADCAST = '''
def {name}(a_arr, b_arr, out, d0, d1, d2, d3, d4, n,
           sa0, sa1, sa2, sa3, sa4, sa5, sb0, sb1, sb2, sb3, sb4, sb5, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        j = i % n
        q = i // n
        i4 = q % d4
        q //= d4
        i3 = q % d3
        q //= d3
        i2 = q % d2
        q //= d2
        i1 = q % d1
        i0 = q // d1
        a = {lo}a_arr[i0 * sa0 + i1 * sa1 + i2 * sa2 + i3 * sa3 + i4 * sa4 + j * sa5]{lc}
        b = {lo}b_arr[i0 * sb0 + i1 * sb1 + i2 * sb2 + i3 * sb3 + i4 * sb4 + j * sb5]{lc}
        if req == REQ_ADD:
            out[i] += {expr}
        elif req != REQ_NULL:
            out[i] = {expr}
'''

_memo = {}
_SPECIAL = {}


def _special():
    """``erfinv`` and ``digamma`` as device functions (made once, on first use)."""
    if not _SPECIAL:
        _SPECIAL["erfinv"] = cuda.jit(device=True)(special.erfinv)
        _SPECIAL["digamma"] = cuda.jit(device=True)(special.digamma)
    return _SPECIAL


def _uses(name, expr):
    return re.search(rf"\b{name}\b", expr) is not None


def _half(dtype):
    """float16 arrays are computed in float32 (``T``), each load converted."""
    return np.dtype(dtype) == np.float16


def _load(dtype):
    return ("T(", ")") if _half(dtype) else ("", "")


def _compile(template, dtype, **fields):
    name = "kernel"
    t = np.float32 if _half(dtype) else np.dtype(dtype).type
    ns = {"cuda": cuda, "math": math, "np": np, "T": t, "REQ_ADD": REQ_ADD,
          "REQ_NULL": REQ_NULL, "__name__": __name__, **_special()}
    exec(compile(template.format(name=name, **fields), __file__, "exec"), ns)
    return cuda.jit(ns[name])


def map_kernel(spec, dtype, hoisted=()):
    key = ("map", spec, np.dtype(dtype), tuple(hoisted))
    fn = _memo.get(key)
    if fn is None:
        used = [a for a in spec.args if _uses(a, spec.expr)]
        lo, lc = _load(dtype)
        fn = _compile(
            _MAP, dtype,
            params=", ".join(f"{a}_arr" for a in spec.args),
            scalars="".join(f"{s}, " for s in spec.scalars),
            hoisted="".join(f"    {a} = {lo}{a}_arr[0]{lc}\n" for a in used if a in hoisted),
            loads="".join(f"        {a} = {lo}{a}_arr[i]{lc}\n" for a in used
                          if a not in hoisted),
            expr=spec.expr)
        _memo[key] = fn
    return fn


def broadcast_kernel(spec, dtype):
    key = ("broadcast", spec, np.dtype(dtype))
    fn = _memo.get(key)
    if fn is None:
        lo, lc = _load(dtype)
        fn = _compile(_BROADCAST, dtype, expr=spec.expr, lo=lo, lc=lc)
        _memo[key] = fn
    return fn


def launch(kernel, n):
    """``launcher`` that skips empty outputs (nothing to launch over)."""
    return launcher(kernel, n) if n > 0 else _nothing


def _nothing(*args):
    return None


def prepare_map(call):
    spec = spec_of(call)
    n = size_of(call.out_shapes[0])
    fn = map_kernel(spec, call.out_dtypes[0])
    return Launch(launch(fn, n), typed_scalars(call, spec) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))
