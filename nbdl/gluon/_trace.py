"""Tracing state shared by HybridBlock and Parameter.

While a HybridBlock builds its graph, its ``forward`` runs on Symbols and
``Parameter.data()`` must hand out the parameter's Symbol variable instead of
its array; ``tracing()`` says whether that is happening."""
import contextlib
import threading

from ..ndarray.invoke import invoke
from ..symbol.construct import create
from ..symbol.symbol import Symbol

_state = threading.local()


def tracing():
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def trace():
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def call_op(op_name, inputs, name=None, **attrs):
    """Run ``op_name`` on NDArrays, or add it to the graph when any input is a
    Symbol: what layers use so that one ``forward`` serves both.  ``name``
    (None: automatic) names the graph node; eager calls ignore it."""
    for x in inputs:
        if isinstance(x, Symbol):
            return create(op_name, *inputs, name=name, **attrs)
    return invoke(op_name, list(inputs), attrs)
