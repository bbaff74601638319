"""Special functions of ``nbdl.npx`` (MXNet's ``_npx_erf``, ``_npx_erfinv``,
``_npx_gamma``, ``_npx_gammaln``): one op each, eager on NDArrays or a graph
node on Symbols (see ``nbdl.np._dispatch``)."""
from ..np._dispatch import apply, operands


def _make(op):
    def fn(data):
        (x,), on_symbols = operands([data], op)
        return apply(op, [x], on_symbols=on_symbols)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"``{op}`` of ``data``, elementwise (op ``{op}``).\n\nParameters\n----------\n"
                  f"data : NDArray or Symbol\n    the input\n")
    return fn


erf = _make("erf")
erfinv = _make("erfinv")
gamma = _make("gamma")
gammaln = _make("gammaln")
