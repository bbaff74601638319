"""Symbol checks of ``nbdl.test_utils`` with MXNet 1.9.1's signatures:
``check_symbolic_forward``, ``check_symbolic_backward``,
``check_numeric_gradient`` and ``check_consistency``.  They bind the symbol
on nbdl's executor through ``nbdl.testing`` (``bind_and_run``,
``numeric_gradients``)."""
import traceback

import numpy as np

from .. import testing as _testing
from ..device import as_device, current_device
from ..errors import ArgumentError
from ..ndarray import array as _nd_array
from ._compare import assert_almost_equal
from ._tols import default_dtype, default_numeric_eps, get_tolerance, get_tols

_FLOATS = (np.float16, np.float32, np.float64)


def _check_dtype(fn, dtype, allow_asnumpy=True):
    ok = (allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy") or \
        (not isinstance(dtype, str) and np.dtype(dtype) in [np.dtype(t) for t in _FLOATS])
    if not ok:
        allowed = "'asnumpy', " if allow_asnumpy else ""
        raise ArgumentError(f"{fn}: dtype={dtype!r}; expected {allowed}float16, float32 or float64")


def _cast(a, dtype):
    a = _testing._np(a)
    return np.array(a) if isinstance(dtype, str) else np.asarray(a, dtype=dtype)


def _by_name(fn, what, names, values, dtype):
    """A list (in ``names`` order) or dict of arrays -> dict of numpy arrays."""
    if values is None:
        return None
    if isinstance(values, dict):
        if set(values) != set(names):
            raise ArgumentError(f"{fn}: the keys of {what} {sorted(values)} do not match the "
                                f"symbol's {sorted(names)}")
        return {k: _cast(values[k], dtype) for k in names}
    values = list(values)
    if len(values) != len(names):
        raise ArgumentError(f"{fn}: {what} has {len(values)} arrays for {len(names)} "
                            f"names {names}")
    return {k: _cast(v, dtype) for k, v in zip(names, values)}


def _nd(arrays, ctx):
    return [_nd_array(a, ctx=ctx, dtype=a.dtype) for a in arrays]


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location``, run forward (inference) and compare the
    outputs with ``expected``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
        Every argument (list in ``sym.list_arguments()`` order).
    expected : list or dict of numpy.ndarray
        The outputs (dict by ``sym.list_outputs()`` name).
    rtol, atol : None, float or dict of dtype to float
    aux_states : list or dict of numpy.ndarray, optional
    ctx : Context, optional
    equal_nan : bool
    dtype : numpy dtype or 'asnumpy'
        Inputs are cast to it ('asnumpy' keeps each array's dtype).

    Returns
    -------
    list of NDArray
        The outputs.
    """
    fn = "check_symbolic_forward"
    _check_dtype(fn, dtype)
    ctx = as_device(ctx) if ctx is not None else current_device()
    args = _by_name(fn, "location", sym.list_arguments(), location, dtype)
    aux = _by_name(fn, "aux_states", sym.list_auxiliary_states(), aux_states, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    _, outs, _, _ = _testing.bind_and_run(sym, args, aux, device=ctx, is_train=False)
    for name, e, o in zip(sym.list_outputs(), expected, outs):
        assert_almost_equal(e, o, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return _nd(outs, ctx)


def _grad_reqs(fn, grad_req, names):
    if isinstance(grad_req, str):
        reqs = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        reqs = dict(zip(names, grad_req))
    elif isinstance(grad_req, dict):
        reqs = {k: grad_req.get(k, "null") for k in names}
    else:
        raise ArgumentError(f"{fn}: grad_req must be a str, list or dict, got {grad_req!r}")
    for k, r in reqs.items():
        if r not in ("write", "add", "null"):
            raise ArgumentError(f"{fn}: grad_req {r!r} for argument {k!r}; "
                                f"expected 'write', 'add' or 'null'")
    return reqs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location``, run forward (training) and backward
    with ``out_grads``, and compare the gradients with ``expected``.

    Gradient arrays start from random values, so ``'add'`` is checked as
    ``grad - start == expected`` and ``'null'`` as "left unchanged".

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
    out_grads : None, list or dict of numpy.ndarray
        Head gradients (dict by output name); None for loss outputs.
    expected : list or dict of numpy.ndarray
        Expected gradient per argument (dict: only those are checked).
    rtol, atol : None, float or dict of dtype to float
    aux_states : list or dict of numpy.ndarray, optional
    grad_req : str, list or dict of str
        'write', 'add' or 'null' per argument.
    ctx : Context, optional
    grad_stypes : dict of str to str, optional
        Only 'default' storage is supported.
    equal_nan : bool
    dtype : numpy dtype or 'asnumpy'

    Returns
    -------
    dict of str to NDArray
        The gradient arrays after backward.
    """
    fn = "check_symbolic_backward"
    _check_dtype(fn, dtype)
    for k, st in (grad_stypes or {}).items():
        if st not in (None, "default"):
            raise ArgumentError(f"{fn}: grad_stypes[{k!r}]={st!r}: nbdl has dense storage only")
    ctx = as_device(ctx) if ctx is not None else current_device()
    arg_names = sym.list_arguments()
    args = _by_name(fn, "location", arg_names, location, dtype)
    aux = _by_name(fn, "aux_states", sym.list_auxiliary_states(), aux_states, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(arg_names, expected))
    unknown = sorted(set(expected) - set(arg_names))
    if unknown:
        raise ArgumentError(f"{fn}: expected names {unknown} are not arguments of the symbol "
                            f"({arg_names})")
    expected = {k: _testing._np(v) for k, v in expected.items()}
    reqs = _grad_reqs(fn, grad_req, arg_names)
    start = {k: np.random.normal(size=expected[k].shape).astype(
        expected[k].dtype if dtype == "asnumpy" else dtype) for k in sorted(expected)}
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    if out_grads is not None:
        # head gradients past the outputs are ignored, as MXNet's executor
        # does (its test_prelu passes one for each argument)
        out_grads = [_cast(g, dtype) for g in out_grads[:len(sym.list_outputs())]]
    names = list(start)
    _, _, grads, _ = _testing.bind_and_run(
        sym, args, aux, grad_names=names, grad_req={k: reqs[k] for k in names},
        grad_init=start, out_grads=out_grads, backward=True, device=ctx, is_train=True)
    for name, e in expected.items():
        label = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        if reqs[name] == "write":
            assert_almost_equal(e, grads[name], rtol, atol, label, equal_nan=equal_nan)
        elif reqs[name] == "add":
            assert_almost_equal(e, grads[name] - start[name], rtol, atol, label,
                                equal_nan=equal_nan)
        else:
            assert_almost_equal(start[name], grads[name], rtol, atol, label, equal_nan=equal_nan)
    return dict(zip(names, _nd([grads[k] for k in names], ctx)))


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Compare ``sym``'s gradients with central finite differences (of the
    outputs projected on a random head gradient).

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
        Every argument's value.
    aux_states : list or dict of numpy.ndarray, optional
    numeric_eps : None, float or dict of dtype to float
        Finite-difference step (default ``default_numeric_eps()``).
    rtol, atol : None, float or dict of dtype to float
    grad_nodes : None, list of str, or dict of str to grad_req
        Arguments to check (default all); a dict's 'add'/'null' entries
        are checked through an executor bound with that request.
    use_forward_train : bool
        Run forward in training mode.
    ctx : Context, optional
    grad_stype_dict : dict, optional
        Only 'default' storage is supported.
    dtype : float16, float32 or float64
        Inputs are cast to it (differences are summed in float64).
    """
    fn = "check_numeric_gradient"
    _check_dtype(fn, dtype, allow_asnumpy=False)
    for k, st in (grad_stype_dict or {}).items():
        if st not in (None, "default"):
            raise ArgumentError(f"{fn}: grad_stype_dict[{k!r}]={st!r}: dense storage only")
    ctx = as_device(ctx) if ctx is not None else current_device()
    arg_names = sym.list_arguments()
    args = _by_name(fn, "location", arg_names, location, dtype)
    aux = _by_name(fn, "aux_states", sym.list_auxiliary_states(), aux_states, dtype)
    if grad_nodes is None:
        reqs = {k: "write" for k in arg_names}
    elif isinstance(grad_nodes, dict):
        reqs = _grad_reqs(fn, grad_nodes, list(grad_nodes))
    elif isinstance(grad_nodes, (list, tuple)):
        reqs = {k: "write" for k in grad_nodes}
    else:
        raise ArgumentError(f"{fn}: grad_nodes must be a list or dict, got {grad_nodes!r}")
    bad = sorted(set(reqs) - set(arg_names))
    if bad:
        raise ArgumentError(f"{fn}: grad_nodes {bad} are not arguments ({arg_names})")
    eps = get_tolerance(np.zeros((), dtype), numeric_eps, default_numeric_eps())
    if np.dtype(dtype) != np.float64 and eps < 1e-5:
        raise ArgumentError(f"{fn}: numeric_eps={eps} is too small for {np.dtype(dtype).name} "
                            f"finite differences (use >= 1e-5)")
    want = [k for k in reqs if reqs[k] != "null"]
    sym_grads, numeric, proj = _testing.numeric_gradients(
        sym, args, aux, numeric_eps=eps, grad_nodes=want or None,
        use_forward_train=use_forward_train, device=ctx, dtype=dtype)
    other = [k for k in reqs if reqs[k] != "write"]
    if other:
        start = {k: np.random.normal(0, 0.01, size=args[k].shape).astype(dtype) for k in other}
        _, _, got, _ = _testing.bind_and_run(
            sym, args, aux, grad_names=other, grad_req={k: reqs[k] for k in other},
            grad_init=start, out_grads=proj, backward=True, device=ctx,
            is_train=use_forward_train)
    for name, req in reqs.items():
        label = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(numeric[name], sym_grads[name], rtol, atol, label)
        elif req == "add":
            assert_almost_equal(numeric[name], got[name] - start[name], rtol, atol, label)
        else:
            assert_almost_equal(start[name], got[name], rtol, atol, label)


def _smaller_dtype(a, b):
    return a if b is None or np.dtype(a).itemsize < np.dtype(b).itemsize else b


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Run ``sym`` under each context/dtype configuration of ``ctx_list``
    on the same random inputs and compare outputs (and gradients) with
    those of the most precise configuration.

    Parameters
    ----------
    sym : Symbol or list of Symbol
        One symbol, or one per configuration (same arguments and outputs).
    ctx_list : list of dict
        Each ``{'ctx': Context, '<arg>': shape, ..., 'type_dict': {...}}``
        (``simple_bind``'s keywords).
    scale : float
        Standard deviation (or half-range, with ``use_uniform``) of the inputs.
    grad_req : str
        'write', 'add' or 'null' (no backward).
    arg_params, aux_params : dict of str to numpy.ndarray, optional
        Inputs to use instead of random ones (aux states default to 0).
    rtol, atol : None, float or dict of dtype to float
    raise_on_err : bool
        Raise on the first mismatch (else print it and go on).
    ground_truth : dict of str to array, optional
        Expected outputs and gradients by name, instead of the most
        precise configuration's.
    equal_nan : bool
    use_uniform : bool
        Uniform instead of normal random inputs.
    rand_type : numpy dtype
        The dtype random inputs are drawn in.

    Returns
    -------
    dict of str to numpy.ndarray
        The reference outputs and gradients.
    """
    fn = "check_consistency"
    if len(ctx_list) < 2:
        raise ArgumentError(f"{fn}: ctx_list needs at least two configurations, got "
                            f"{len(ctx_list)}")
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(syms) != len(ctx_list):
        raise ArgumentError(f"{fn}: {len(syms)} symbols for {len(ctx_list)} configurations")
    out_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes, ctxs = [], []
    for s, spec in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != out_names:
            raise ArgumentError(f"{fn}: every symbol needs the arguments {arg_names} and "
                                f"outputs {out_names}")
        spec = dict(spec)
        ctxs.append(as_device(spec.pop("ctx", None)))
        exes.append(s.simple_bind(ctxs[-1], grad_req=grad_req, **spec))
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for n, arr in sorted(exes[0].arg_dict.items()):
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(-0.92 * scale, 0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for n, arr in exe.arg_dict.items():
            arr[:] = np.asarray(arg_params[n]).astype(arr.dtype)
        for n, arr in exe.aux_dict.items():
            arr[:] = np.asarray(aux_params[n]).astype(arr.dtype)
        for arr in exe.grad_dict.values():
            if arr is not None:
                arr[:] = np.zeros(arr.shape, dtype=arr.dtype)
    infer = [[o.asnumpy().copy() for o in exe.forward(is_train=False)] for exe in exes]
    dtypes = [np.dtype(out[0].dtype) for out in infer]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))

    def compare(arr, ref, what, i, rt, at):
        try:
            assert_almost_equal(arr, ref, rtol=rt, atol=at, equal_nan=equal_nan,
                                names=(f"ctx{i}_{what}", f"ctx{gt_idx}_{what}"))
        except AssertionError as e:
            print(f"{fn}: {what}: configuration {i} ({ctx_list[i].get('ctx')}) differs from "
                  f"configuration {gt_idx}")
            traceback.print_exc()
            if raise_on_err:
                raise
            print(str(e))
    gt = dict(ground_truth) if ground_truth is not None else dict(zip(out_names, infer[gt_idx]))
    for i, outs in enumerate(infer):
        if i != gt_idx:
            for name, o in zip(out_names, outs):
                compare(o, _testing._np(gt[name]), name, i, rtol, atol)
    if grad_req == "null":
        return gt
    train = [[o.asnumpy().copy() for o in exe.forward(is_train=True)] for exe in exes]
    least = [o.dtype for o in train[0]]
    for outs in train:
        least = [_smaller_dtype(o.dtype, d) for o, d in zip(outs, least)]
    heads = [o.astype(d) for o, d in zip(train[0], least)]
    grads = []
    for exe, ctx, outs in zip(exes, ctxs, train):
        exe.backward([_nd_array(h, ctx=ctx, dtype=o.dtype) for h, o in zip(heads, outs)])
        grads.append({n: (g.asnumpy().copy() if g is not None else None)
                      for n, g in exe.grad_dict.items()})
    if ground_truth is None:
        gt.update(dict(zip(out_names, train[gt_idx])))
        gt.update(grads[gt_idx])
    for i in range(len(exes)):
        if i == gt_idx:
            continue
        current = list(zip(out_names, train[i])) + [(n, grads[i].get(n)) for n in arg_names]
        for name, arr in current:
            ref = gt.get(name)
            if ref is None or arr is None:
                continue
            ref = _testing._np(ref)
            rt, at = rtol, atol
            small_arr = _smaller_dtype(arr.dtype, dtypes[i])
            small_ref = _smaller_dtype(ref.dtype, dtypes[gt_idx])
            if small_arr != arr.dtype or small_ref != ref.dtype:
                rt, at = get_tols(arr.astype(small_arr), ref.astype(small_ref), rtol, atol)
            compare(arr, ref, name, i, rt, at)
    return gt
