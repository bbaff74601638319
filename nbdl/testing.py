"""Test helpers in the spirit of ``mxnet.test_utils``.

``check_symbolic_forward`` / ``check_symbolic_backward`` compare a symbol's
outputs and gradients with expected arrays, ``check_numeric_gradient``
compares its gradients with central differences (in float64 by default),
``check_consistency`` compares devices (cpu against the CUDA simulator), and
``assert_plan_valid`` checks a memory plan independently of the planner."""
import numpy as np

from . import config
from .device import Device, as_device, cpu
from .errors import NbdlError
from .graph.gradient import build_gradient
from .ops.ir import classify_variables, make_variable, topo_order
from .executor.interpret import interpret


def assert_almost_equal(a, b, rtol=1e-5, atol=1e-7, names=("a", "b"), equal_nan=False):
    a = _np(a)
    b = _np(b)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {names[0]} {a.shape} vs {names[1]} {b.shape}")
    if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        tol = atol + rtol * np.abs(b.astype(np.float64))
        bad = np.argwhere(~(diff <= tol))
        idx = tuple(bad[0]) if len(bad) else ()
        raise AssertionError(
            f"{names[0]} and {names[1]} differ at {len(bad)} of {a.size} elements "
            f"(rtol={rtol}, atol={atol}); first at {idx}: {a[idx]!r} vs {b[idx]!r}; "
            f"max abs diff {diff.max():.3g}")


def _np(x):
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    return np.asarray(x)


def _locations(sym, location, aux_states):
    order = topo_order(sym._outputs)
    arg_nodes, aux_nodes = classify_variables(order)
    if isinstance(location, dict):
        missing = [n.name for n in arg_nodes if n.name not in location]
        if missing:
            raise NbdlError(f"location is missing arguments {missing}")
        loc = {n.name: _np(location[n.name]) for n in arg_nodes}
    else:
        if len(location) != len(arg_nodes):
            raise NbdlError(f"location has {len(location)} arrays for arguments "
                            f"{[n.name for n in arg_nodes]}")
        loc = {n.name: _np(a) for n, a in zip(arg_nodes, location)}
    aux = {}
    if aux_states is not None:
        if isinstance(aux_states, dict):
            aux = {n.name: _np(aux_states[n.name]) for n in aux_nodes}
        else:
            aux = {n.name: _np(a) for n, a in zip(aux_nodes, aux_states)}
    return arg_nodes, aux_nodes, loc, aux


def run_symbol(sym, location, aux_states=None, out_grads=None, grad_nodes=None,
               device=None, is_train=False, engine=None):
    """Forward (and backward when ``out_grads`` is given).  Returns
    ``(outputs, grads, aux)`` as numpy arrays; ``grads`` maps argument name to
    gradient.

    ``engine``: ``"executor"`` binds the symbol (planned arena, inplace,
    write requests, the generated driver) and ``"interpreter"`` runs the
    reference interpreter (fresh arrays, no planning).  The default comes
    from ``NBDL_TEST_ENGINE`` (``executor`` unless set)."""
    device = as_device(device)
    engine = engine or config.test_engine()
    arg_nodes, aux_nodes, loc, aux = _locations(sym, location, aux_states)
    if engine == "executor":
        return _run_executor(sym, arg_nodes, aux_nodes, loc, aux, out_grads, grad_nodes,
                             device, is_train)
    values = {n.output(0): device.from_numpy(np.array(loc[n.name])) for n in arg_nodes}
    aux_arrays = {n.name: device.from_numpy(np.array(aux[n.name])) for n in aux_nodes if n.name in aux}
    for n in aux_nodes:
        if n.name in aux_arrays:
            values[n.output(0)] = aux_arrays[n.name]
    heads = list(sym._outputs)
    grads = {}
    if out_grads is None:
        env = interpret(heads, values, device, is_train=is_train)
    else:
        if grad_nodes is None:
            grad_nodes = [n.name for n in arg_nodes]
        wrt = [n.output(0) for n in arg_nodes if n.name in grad_nodes]
        hg_nodes = [make_variable(f"__head_grad{i}") for i in range(len(heads))]
        for v, g in zip(hg_nodes, out_grads):
            values[v.output(0)] = device.from_numpy(np.ascontiguousarray(_np(g)))
        gents = build_gradient(heads, [v.output(0) for v in hg_nodes], wrt)
        env = interpret(heads + gents, values, device, is_train=is_train)
        grads = {e.node.name: Device.to_numpy(env[g]) for e, g in zip(wrt, gents)}
    outs = [Device.to_numpy(env[h]) for h in heads]
    return outs, grads, {k: Device.to_numpy(v) for k, v in aux_arrays.items()}


def _run_executor(sym, arg_nodes, aux_nodes, loc, aux, out_grads, grad_nodes, device, is_train):
    names = None
    if out_grads is not None:
        names = grad_nodes if grad_nodes is not None else [n.name for n in arg_nodes]
    _, outs, grads, aux_out = bind_and_run(sym, loc, aux, grad_names=names, out_grads=out_grads,
                                           backward=out_grads is not None, device=device,
                                           is_train=is_train)
    return outs, grads, aux_out


def bind_and_run(sym, args, aux=None, grad_names=None, grad_req="write", grad_init=None,
                 out_grads=None, backward=False, device=None, is_train=False):
    """Bind ``sym`` to copies of numpy arrays, run forward (and backward) once.

    Parameters
    ----------
    sym : Symbol
        The graph.
    args : dict of str to numpy.ndarray
        Every argument's value.
    aux : dict of str to numpy.ndarray, optional
        Aux states' values.
    grad_names : list of str, optional
        Arguments that get a gradient array (none when omitted).
    grad_req : str or dict of str to str
        Each gradient's request ('write', 'add', 'null').
    grad_init : dict of str to numpy.ndarray, optional
        Initial contents of the gradient arrays (zeros otherwise).
    out_grads : list of array-like, optional
        Head gradients for backward (None: the executor's default).
    backward : bool
        Whether to run backward after forward.
    device : Device, optional
    is_train : bool
        Forward in training mode.

    Returns
    -------
    (Executor, outputs, grads, aux)
        Outputs as a list and gradients and aux states as dicts of numpy copies."""
    from .executor import bind
    from .ndarray import NDArray
    device = as_device(device)

    def nd(a):
        return NDArray(device.from_numpy(np.array(a)), device)
    arrays = {k: nd(v) for k, v in args.items()}
    aux_nd = {k: nd(v) for k, v in (aux or {}).items()}
    grads, req = None, "null"
    if grad_names:
        init = grad_init or {}
        grads = {n: (nd(np.asarray(init[n], dtype=args[n].dtype)) if n in init
                     else NDArray(device.zeros(args[n].shape, args[n].dtype), device))
                 for n in grad_names}
        req = ({n: grad_req.get(n, "write") for n in grad_names} if isinstance(grad_req, dict)
               else {n: grad_req for n in grad_names})
    ex = bind(sym, device, arrays, args_grad=grads, aux_states=aux_nd or None, grad_req=req)
    outs = [o.asnumpy().copy() for o in ex.forward(is_train=is_train)]
    result = {}
    reqs = req.values() if isinstance(req, dict) else [req]
    if backward and any(r != "null" for r in reqs):
        ex.backward(None if out_grads is None
                    else [nd(np.ascontiguousarray(_np(g))) for g in out_grads])
    if backward:
        result = {k: g.asnumpy().copy() for k, g in (grads or {}).items()}
    return ex, outs, result, {k: v.asnumpy().copy() for k, v in aux_nd.items()}


def check_symbolic_forward(sym, location, expected, rtol=1e-5, atol=1e-6, aux_states=None,
                           device=None, is_train=False, dtype=None):
    outs, _, _ = run_symbol(sym, location, aux_states, device=device, is_train=is_train)
    if isinstance(expected, dict):
        expected = [expected[n] for n in sym.list_outputs()]
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert_almost_equal(o, e, rtol, atol, names=(f"output[{i}]", "expected"))
    return outs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=1e-5, atol=1e-6,
                            aux_states=None, grad_req="write", device=None, is_train=True):
    if not isinstance(out_grads, (list, tuple)):
        out_grads = [out_grads]
    names = list(expected) if isinstance(expected, dict) else None
    _, grads, _ = run_symbol(sym, location, aux_states, out_grads=out_grads,
                             grad_nodes=names, device=device, is_train=is_train)
    if names is None:
        arg_names = sym.list_arguments()
        expected = dict(zip(arg_names, expected))
    for name, e in expected.items():
        if e is None:
            continue
        assert_almost_equal(grads[name], e, rtol, atol, names=(f"grad of {name}", "expected"))
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, device=None,
                           dtype=np.float64, seed=0):
    """Compare the gradient rule's result with central differences of
    ``sum(outputs * random head gradient)``.  Inputs are cast to ``dtype``
    (float64 by default, so the comparison is tight)."""
    rtol = rtol if rtol is not None else (1e-4 if dtype == np.float64 else 5e-2)
    atol = atol if atol is not None else (1e-6 if dtype == np.float64 else 1e-3)
    grads, numeric, _ = numeric_gradients(sym, location, aux_states, numeric_eps, grad_nodes,
                                          use_forward_train, device, dtype, seed)
    for name, num in numeric.items():
        assert_almost_equal(grads[name], num, rtol, atol,
                            names=(f"symbolic grad of {name}", "numeric grad"))
    return grads


def numeric_gradients(sym, location, aux_states=None, numeric_eps=None, grad_nodes=None,
                      use_forward_train=True, device=None, dtype=np.float64, seed=0):
    """The symbolic gradients of ``sum(outputs * P)`` for a random head
    gradient ``P`` and their central-difference estimates, for comparison.

    Parameters
    ----------
    sym : Symbol
        The graph.
    location : list or dict of array-like
        Argument values (list in ``list_arguments()`` order).
    aux_states : list or dict of array-like, optional
        Aux state values.
    numeric_eps : float, optional
        Finite-difference step (1e-5 in float64, 1e-2 otherwise).
    grad_nodes : list of str, optional
        Arguments to differentiate (default: every floating one).
    use_forward_train : bool
        Run forward in training mode.
    device : Device, optional
    dtype : numpy dtype
        Floating inputs are cast to it.
    seed : int
        Seed of the head gradient ``P``.

    Returns
    -------
    (dict, dict, list)
        Symbolic gradients and numeric gradients (float64) by argument
        name, and the head gradients ``P``."""
    rng = np.random.RandomState(seed)
    arg_nodes, aux_nodes, loc, aux = _locations(sym, location, aux_states)
    # C order: the finite differences below perturb ``reshape(-1)`` views in place
    loc = {k: (v.astype(dtype, order="C") if np.issubdtype(v.dtype, np.floating) else v)
           for k, v in loc.items()}
    aux = {k: (v.astype(dtype, order="C") if np.issubdtype(v.dtype, np.floating) else v)
           for k, v in aux.items()}
    if grad_nodes is None:
        grad_nodes = [k for k, v in loc.items() if np.issubdtype(v.dtype, np.floating)]
    eps = numeric_eps if numeric_eps is not None else (1e-5 if dtype == np.float64 else 1e-2)
    outs, _, _ = run_symbol(sym, loc, aux, device=device, is_train=use_forward_train)
    proj = [rng.normal(size=o.shape).astype(o.dtype) for o in outs]
    _, grads, _ = run_symbol(sym, loc, aux, out_grads=proj, grad_nodes=grad_nodes,
                             device=device, is_train=use_forward_train)

    f = _projected_forward(sym, loc, aux, proj, device, use_forward_train)

    numeric = {}
    for name in grad_nodes:
        x = loc[name]
        num = np.zeros(x.shape, dtype=np.float64)
        flat = x.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            fp = f(loc)
            flat[i] = old - eps
            fm = f(loc)
            flat[i] = old
            num.reshape(-1)[i] = (fp - fm) / (2 * eps)
        numeric[name] = num
    return grads, numeric, proj


def _projected_forward(sym, loc, aux, proj, device, is_train):
    """``f(values) = sum(outputs * proj)`` with every aux state at its given
    value: through one bound executor whose arguments are overwritten per
    call (binding per finite difference made large checks slow), or the
    interpreter when ``NBDL_TEST_ENGINE=interpreter``."""
    if config.test_engine() != "executor":
        def f(values):
            o, _, _ = run_symbol(sym, values, {k: v.copy() for k, v in aux.items()},
                                 device=device, is_train=is_train)
            return sum(float(np.sum(a.astype(np.float64) * p)) for a, p in zip(o, proj))
        return f
    ex, _, _, _ = bind_and_run(sym, loc, aux, device=device, is_train=is_train)

    def f(values):
        for k, v in values.items():
            ex.arg_dict[k][:] = v
        for k, v in aux.items():
            ex.aux_dict[k][:] = v
        outs = ex.forward(is_train=is_train)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * p)) for o, p in zip(outs, proj))
    return f


def check_consistency(sym, location, devices=None, aux_states=None, rtol=1e-5, atol=1e-6,
                      grad=True, is_train=True, seed=0):
    """Outputs (and gradients) agree across devices, e.g. ``[cpu(), gpu()]``
    (the GPU is Numba's simulator under ``NUMBA_ENABLE_CUDASIM=1``; nbdl's
    tests mark such checks ``cuda``: docs/gpu.md)."""
    from .device import gpu
    devices = devices or [cpu(), gpu()]
    rng = np.random.RandomState(seed)
    results = []
    out_grads = None
    for dev in devices:
        if grad and out_grads is None:
            outs, _, _ = run_symbol(sym, location, aux_states, device=dev, is_train=is_train)
            out_grads = [rng.normal(size=o.shape).astype(o.dtype) for o in outs]
        res = run_symbol(sym, location, aux_states, out_grads=out_grads if grad else None,
                         device=dev, is_train=is_train)
        results.append(res)
    ref_outs, ref_grads, ref_aux = results[0]
    for dev, (outs, grads, aux) in zip(devices[1:], results[1:]):
        for i, (a, b) in enumerate(zip(outs, ref_outs)):
            assert_almost_equal(a, b, rtol, atol, names=(f"{dev} output[{i}]", f"{devices[0]} output[{i}]"))
        for k in ref_grads:
            assert_almost_equal(grads[k], ref_grads[k], rtol, atol, names=(f"{dev} grad {k}", f"{devices[0]} grad {k}"))
        for k in ref_aux:
            assert_almost_equal(aux[k], ref_aux[k], rtol, atol, names=(f"{dev} aux {k}", f"{devices[0]} aux {k}"))
    return results


def assert_plan_valid(plan):
    """Raise ``AssertionError`` unless ``plan`` passes the planner's
    independent verifier (no two simultaneously live entries overlap, every
    entry inside the arena, inplace pairs legal)."""
    from .planner import check_plan
    problems = check_plan(plan)
    if problems:
        raise AssertionError("invalid memory plan:\n  " + "\n  ".join(problems))


def rand_ndarray(shape, dtype=np.float32, low=-1.0, high=1.0, seed=None):
    rng = np.random.RandomState(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)
