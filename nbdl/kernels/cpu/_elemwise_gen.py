"""Generates the CPU loops of the elementwise ops from their expressions
(``kernels.shared.elemwise_exprs``), one ``@njit(cache=True)`` dispatcher per (op, layout,
serial/parallel), made on first use.

Numba's on-disk cache needs a function with a source file.  The generated
source is therefore compiled with this module's path as its file name and
its globals' ``__name__`` set to this module, and every function's name
carries a hash of its own source: Numba keys the cache on file, name and
bytecode, so an edited expression gets a fresh entry, and an edit to this
file (the templates) invalidates them all through the file's timestamp.
Numba's error messages about a generated kernel therefore quote this file
at the generated line numbers; ``source_of(fn)`` gives the real source.
"""
import hashlib
import math
import re

import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch, declare_serial_twin
from ..shared import special
from ._half import bits_launcher, f2h, h2f, is_half
from ..shared.elemwise_exprs import kernel_name, spec_of, typed_scalars
from ..shared.elemwise_plan import size_of
from ._parallel import use_parallel

_MAP = '''
def {name}({params}, out, {scalars}req):
    T = {T}
    if req == REQ_NULL:
        return
{hoisted}    if req == REQ_ADD:
        for i in {loop}(out.size):
{loads}            {add_i}
{inplace}    else:
        for i in {loop}(out.size):
{loads}            {set_i}
'''

# The serial loop again, for an output the planner placed on the first array
# input: stored through that input, so that LLVM sees one array read and
# written at the same index.  Through ``out`` its vector loop's overlap test
# fails for an exact alias and the scalar loop runs (ResNet-18's in-place
# relu gradients: 190 against 7 us for 65,536 elements, in the network).  The
# parallel loops need no copy: Numba marks a parfor's arrays ``noalias``.
_MAP_INPLACE = '''    elif (out.ctypes.data == {a}_arr.ctypes.data and out.size == {a}_arr.size
          and out.dtype == {a}_arr.dtype):
        for i in range(out.size):
{loads}            {a}_arr[i] = {expr}
'''

_BROADCAST_INNER = '''            if req == REQ_ADD:
                for j in range(n):
{load}                    {add_j}
            else:
                for j in range(n):
{load}                    {set_j}
'''

_BROADCAST = '''
def {name}(a_arr, b_arr, out, d0, d1, d2, d3, d4, n,
           sa0, sa1, sa2, sa3, sa4, sa5, sb0, sb1, sb2, sb3, sb4, sb5, req):
    T = {T}
    if req == REQ_NULL:
        return
    for r in {loop}(d0 * d1 * d2 * d3 * d4):
        i4 = r % d4
        q4 = r // d4        # (a prange index may not be reassigned: new names)
        i3 = q4 % d3
        q3 = q4 // d3
        i2 = q3 % d2
        q2 = q3 // d2
        i1 = q2 % d1
        i0 = q2 // d1
        oa = i0 * sa0 + i1 * sa1 + i2 * sa2 + i3 * sa3 + i4 * sa4
        ob = i0 * sb0 + i1 * sb1 + i2 * sb2 + i3 * sb3 + i4 * sb4
        o = r * n
        if sa5 == 0:
            a = {lo}a_arr[oa]{lc}
{lhs_fixed}        elif sb5 == 0:
            b = {lo}b_arr[ob]{lc}
{rhs_fixed}        else:
{both}'''


def _stores(index, expr, half):
    """(accumulate, overwrite) statements for ``out[index]``; float16
    outputs are uint16 bits, converted around the float32 expression."""
    if half:
        return (f"out[{index}] = f2h(h2f(out[{index}]) + ({expr}))",
                f"out[{index}] = f2h({expr})")
    return f"out[{index}] += {expr}", f"out[{index}] = {expr}"


def _load(half):
    return ("h2f(", ")") if half else ("", "")


_PAD = " " * 20
_GLOBALS = {"np": np, "math": math, "prange": prange, "REQ_ADD": REQ_ADD, "REQ_NULL": REQ_NULL,
            "erfinv": njit(cache=True)(special.erfinv),
            "digamma": njit(cache=True)(special.digamma), "h2f": h2f, "f2h": f2h,
            "__name__": __name__}
_SOURCES = {}
_memo = {}


def _uses(name, expr):
    return re.search(rf"\b{name}\b", expr) is not None


def _compile(tag, template, **fields):
    src = template.format(name="KERNEL", **fields)
    digest = hashlib.sha1(src.encode()).hexdigest()[:12]
    name = re.sub(r"\W", "_", tag) + "_" + digest
    return from_source(name, template.format(name=name, **fields))


def from_source(name, src):
    """The kernel ``name`` compiled from its generated source (also how a
    compile-pool worker process rebuilds it: ``fn.nbdl_source`` names this
    function and its arguments, and the same source under this module's file
    name gives the same on-disk cache entry)."""
    ns = dict(_GLOBALS)
    exec(compile(src, __file__, "exec"), ns)
    parallel = "prange(" in src
    # numpy's error model: x / 0 is inf or NaN (MXNet's result), not a ZeroDivisionError
    fn = njit(cache=True, parallel=parallel, error_model="numpy")(ns[name])
    fn.nbdl_source = (__name__, "from_source", (name, src))
    _SOURCES[name] = src
    return fn


def source_of(fn):
    """The generated source of a kernel (for debugging)."""
    return _SOURCES.get(fn.py_func.__name__)


def map_kernel(tag, spec, parallel=False, hoisted=(), half=False):
    """``fn(*arrays, out, *scalars, req)``: ``out[i] = expr`` over flat arrays;
    arguments in ``hoisted`` have one element, read once before the loop.
    ``half``: for float16 arrays, a serial loop over their bits, computing in
    float32, wrapped by ``_half.bits_launcher`` (a Python function)."""
    parallel = parallel and not half
    key = ("map", spec, parallel, tuple(hoisted), half)
    fn = _memo.get(key)
    if fn is None:
        used = [a for a in spec.args if _uses(a, spec.expr)]
        lo, lc = _load(half)
        add_i, set_i = _stores("i", spec.expr, half)
        loads = "".join(f"            {a} = {lo}{a}_arr[i]{lc}\n" for a in used if a not in hoisted)
        first = next((a for a in spec.args if a not in hoisted), None)
        inplace = "" if parallel or half or first is None else \
            _MAP_INPLACE.format(a=first, loads=loads, expr=spec.expr)
        fn = _compile(
            f"{tag}_{'par' if parallel else 'ser'}" + "".join(f"_{h}0" for h in hoisted)
            + ("_f16" if half else ""),
            _MAP, T="np.float32" if half else "out.dtype.type",
            params=", ".join(f"{a}_arr" for a in spec.args),
            scalars="".join(f"{s}, " for s in spec.scalars),
            hoisted="".join(f"    {a} = {lo}{a}_arr[0]{lc}\n" for a in used if a in hoisted),
            loads=loads, inplace=inplace,
            loop="prange" if parallel else "range", add_i=add_i, set_i=set_i)
        if half:
            fn = bits_launcher(fn)
        _memo[key] = fn
        if parallel:
            declare_serial_twin(fn, lambda: map_kernel(tag, spec, False, hoisted))
    return fn


def broadcast_kernel(tag, spec, parallel=False, half=False):
    """``fn(a, b, out, d0..d4, n, sa0..sa5, sb0..sb5, req)`` (see
    ``kernels.shared.elemwise_plan.broadcast_scalars``).  The inner loop is specialised on
    which side, if any, is broadcast along it, so it stays contiguous.
    Computed indices are cast to ``np.uintp``: a signed index makes Numba
    check for negative (wrap-around) indices per element, which kept this
    loop from vectorising (5x slower).  ``half`` as in ``map_kernel``."""
    parallel = parallel and not half
    key = ("broadcast", spec, parallel, half)
    fn = _memo.get(key)
    if fn is None:
        lo, lc = _load(half)
        add_j, set_j = _stores("np.uintp(o + j)", spec.expr, half)

        def inner(load):
            return _BROADCAST_INNER.format(load=load, add_j=add_j, set_j=set_j)
        fn = _compile(
            f"{tag}_bcast_{'par' if parallel else 'ser'}" + ("_f16" if half else ""), _BROADCAST,
            T="np.float32" if half else "out.dtype.type", lo=lo, lc=lc,
            loop="prange" if parallel else "range",
            lhs_fixed=inner(f"{_PAD}b = {lo}b_arr[np.uintp(ob + j)]{lc}\n"),
            rhs_fixed=inner(f"{_PAD}a = {lo}a_arr[np.uintp(oa + j)]{lc}\n"),
            both=inner(f"{_PAD}a = {lo}a_arr[np.uintp(oa + j)]{lc}\n"
                       f"{_PAD}b = {lo}b_arr[np.uintp(ob + j)]{lc}\n"))
        if half:
            fn = bits_launcher(fn)
        _memo[key] = fn
        if parallel:
            declare_serial_twin(fn, lambda: broadcast_kernel(tag, spec, False))
    return fn


def prepare_map(call):
    """Every op whose inputs and output have one size: ``out[i] = f(in[i]...)``."""
    spec = spec_of(call)
    n = size_of(call.out_shapes[0])
    fn = map_kernel(kernel_name(call), spec, use_parallel(n), half=is_half(call.out_dtypes[0]))
    return Launch(fn, typed_scalars(call, spec) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))
