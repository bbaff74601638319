"""``nbdl.nd.invoke``: one op on NDArrays.

``invoke`` is ``nbdl.imperative.invoke.invoke`` with NDArray as the class of
the results of ops without array inputs (``invoke("_random_uniform", [],
{"shape": (3,)})``); ``scalar_op``, ``clear_cache`` and ``cache_info`` are
the runtime's own."""
from ..array import NDArray
from ..imperative.invoke import cache_info, clear_cache, scalar_op  # noqa: F401
from ..imperative.invoke import invoke as _invoke


def invoke(op, inputs, attrs=None, out=None, is_train=None, device=None):
    """Run op ``op`` (a name or an ``OpDef``) eagerly on NDArrays ``inputs``
    (data inputs, then aux states, which are updated in place).

    Parameters
    ----------
    op : str or OpDef
        The op.
    inputs : list of NDArray
        Its array inputs.
    attrs : dict, optional
        Its attributes (strings or Python values).
    out : NDArray or list of NDArray, optional
        Arrays receiving the visible outputs instead of new ones.
    is_train : bool, optional
        The training flag (default ``autograd.is_training()``).
    device : Device, optional
        Where an op without inputs runs.

    Returns
    -------
    NDArray or list of NDArray
        The visible outputs (taped under ``autograd.record()``).
    """
    return _invoke(op, inputs, attrs, out, is_train, device, NDArray)
