"""ParameterDict: Gluon 1.x's dictionary of Parameters.

``Block.collect_params()`` returns one (keys: MXNet 1.x's prefixed names for
a 1.x-style block, structural names otherwise; see ``nbdl.gluon._scope``),
and every Block owns one (``block.params``: its own parameters, named
``prefix + name``).  It is a ``dict`` subclass, so code written for Gluon
2.0, where ``collect_params()`` is a plain dict, keeps working; ``get`` is
1.x's (create or retrieve ``prefix + name``) unless it is given a
positional default, when it is ``dict.get``.

Loading and saving write MXNet's NDArray file format (never pickle)."""
import numpy as np

from .. import initializer
from ..ndarray import NDArray
from .parameter import (Constant, Parameter, ParameterError, ResetCtxAlias, _devices,
                        _normalize_shape)


class MissingParameterError(ParameterError, KeyError):
    """A name that a ParameterDict does not hold (``get_constant`` without
    a value)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


# keyword arguments of ParameterDict.get stored under another attribute
_PRIVATE = {"allow_deferred_init": "_allow_deferred_init", "differentiable": "_differentiable",
            "stype": "_stype", "grad_stype": "_grad_stype"}
_GET_KEYS = ("shape", "dtype", "init", "grad_req", "lr_mult", "wd_mult", "allow_deferred_init",
             "differentiable", "stype", "grad_stype")


def _brief(names, limit=6):
    names = list(names)
    if len(names) > limit:
        return ", ".join(repr(n) for n in names[:limit // 2]) + ", ..., " + \
            ", ".join(repr(n) for n in names[-(limit // 2):])
    return ", ".join(repr(n) for n in names)


def _merge_devices(device, ctx, where):
    if ctx is not None and device is not None and \
            _devices(ctx, where) != _devices(device, where):
        raise ParameterError(f"{where}: ctx={ctx} and device={device} disagree")
    return device if device is not None else ctx


def as_shared(params, where):
    """``params`` (a ParameterDict, or a dict of Parameters) as a
    ParameterDict to share.

    Parameters
    ----------
    params : ParameterDict or dict
        What a block was given as ``params=``.
    where : str
        The caller, for error messages.
    """
    if isinstance(params, ParameterDict):
        return params
    if isinstance(params, dict):
        bad = [k for k, v in params.items() if not isinstance(v, Parameter)]
        if bad:
            raise ParameterError(f"{where}: params must hold Parameters, but {bad} do not")
        out = ParameterDict("")
        dict.update(out, params)
        return out
    raise ParameterError(f"{where}: params must be a ParameterDict (e.g. "
                         f"other.collect_params()), got {type(params).__name__}")


class ParameterDict(ResetCtxAlias, dict):
    """A dictionary of Parameters, keyed by name, with a name prefix.

    Parameters
    ----------
    prefix : str, default ''
        Prepended to the names given to ``get`` and ``get_constant``.
    shared : ParameterDict or None
        Looked up (and its Parameters taken) before ``get`` creates one.
    """

    def __init__(self, prefix="", shared=None):
        super().__init__()
        self._prefix = prefix
        self._shared = shared
        self._owner = None          # the Block whose ``params`` this is

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        body = "\n".join("  " + repr(v).replace("\n", "\n  ") for v in self.values())
        return f"{name}(\n{body}\n)"

    @property
    def prefix(self):
        """The prefix prepended to the names of new Parameters."""
        return self._prefix

    def _touched(self):
        if self._owner is not None:
            self._owner._mark_1x()

    def _get_impl(self, name):
        if name in self:
            return dict.__getitem__(self, name)
        if self._shared is not None and name in self._shared:
            p = dict.__getitem__(self._shared, name)
            dict.__setitem__(self, name, p)
            return p
        return None

    # -- creating -----------------------------------------------------------
    def get(self, name, *default, **kwargs):
        """Retrieve the Parameter ``prefix + name``, or create it (with
        ``kwargs``: shape, dtype, init, grad_req, lr_mult, wd_mult,
        allow_deferred_init, differentiable) when neither this dictionary
        nor the shared one holds it.

        Parameters
        ----------
        name : str
            The name without the prefix.
        default : object, optional
            Given positionally, ``get`` is ``dict.get(name, default)``
            (Gluon 2.0 code treating ``collect_params()`` as a dict).
        **kwargs
            The Parameter's attributes.  Given for an existing Parameter,
            each must match it (a shape may fill in unknown dimensions);
            attributes the Parameter has not set are set.
        """
        if default:
            if len(default) > 1 or kwargs:
                raise ParameterError(f"ParameterDict.get({name!r}, ...): give a single default "
                                     f"(dict.get) or Parameter attributes as keywords, not both")
            return dict.get(self, name, default[0])
        unknown = sorted(set(kwargs) - set(_GET_KEYS))
        if unknown:
            raise ParameterError(f"ParameterDict.get({name!r}): unknown Parameter attributes "
                                 f"{unknown} (expected some of {list(_GET_KEYS)})")
        self._touched()
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            dict.__setitem__(self, full, param)
        else:
            _match(param, kwargs)
        param._in_dict = True
        return param

    def get_constant(self, name, value=None):
        """Retrieve the Constant ``prefix + name``, or create it from
        ``value`` (an NDArray or array-like).

        Parameters
        ----------
        name : str
            The name without the prefix.
        value : NDArray or array-like, optional
            Required to create the constant; for an existing one it must be
            its value.
        """
        self._touched()
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise MissingParameterError(f"No constant named {full!r}. Please specify value "
                                            f"if you want to create a new constant.")
            param = Constant(full, value)
            dict.__setitem__(self, full, param)
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterError(f"ParameterDict.get_constant: parameter {full!r} exists "
                                     f"but is not a Constant")
            host = value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)
            own = param.value.asnumpy()
            if own.shape != host.shape or not (own == host).all():
                raise ParameterError(f"ParameterDict.get_constant: constant {full!r} already "
                                     f"exists with another value (shape {own.shape}, asked for "
                                     f"shape {host.shape})")
        param._in_dict = True
        return param

    def update(self, other=(), **kw):
        """Add the Parameters of ``other`` (a dict of them); a name already
        held by a different Parameter is an error.

        Parameters
        ----------
        other : dict
            Name -> Parameter.
        """
        items = list(other.items() if hasattr(other, "items") else other) + list(kw.items())
        for k, v in items:
            if k in self and dict.__getitem__(self, k) is not v:
                raise ParameterError(f"Cannot update self with other because they have "
                                     f"different Parameters with the same name {k!r}")
        for k, v in items:
            dict.__setitem__(self, k, v)

    # -- whole-dictionary operations ----------------------------------------
    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False, device=None):
        """Initialize every Parameter (``Parameter.initialize`` with ``init``
        as the default initializer; a Parameter's own ``init`` wins).

        Parameters
        ----------
        init : Initializer or str, default Uniform()
            The default initializer.
        ctx : Device or list of Devices, optional
            Where to keep copies (MXNet 1.x's name of ``device``).
        verbose : bool, default False
            Print each name as it is initialized.
        force_reinit : bool, default False
            Re-initialize Parameters that already are.
        device : Device or list of Devices, optional
            The same as ``ctx``.
        """
        device = _merge_devices(device, ctx, "ParameterDict.initialize")
        init = init if init is not None else initializer.Uniform()
        for name, p in self.items():
            if verbose:
                print(f"initialize {name}")
            p.initialize(None, device, default_init=init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient to 0."""
        for p in self.values():
            if p.grad_req != "null" and p._data is not None:
                p.zero_grad()

    def reset_device(self, device):
        """Move every Parameter to ``device`` (a Device or a list).

        Parameters
        ----------
        device : Device or list of Devices
            The new devices.
        """
        for p in self.values():
            p.reset_device(device)

    def list_device(self):
        """The devices any of the Parameters lives on, in first-seen order."""
        out = []
        for p in self.values():
            for d in p.list_device():
                if d not in out:
                    out.append(d)
        return out

    list_ctx = list_device

    def setattr(self, name, value):
        """Set attribute ``name`` (``grad_req``, ``lr_mult``, ...) of every
        Parameter to ``value``.

        Parameters
        ----------
        name : str
            The attribute.
        value : object
            Its new value.
        """
        for p in self.values():
            if not hasattr(p, name):
                raise ParameterError(f"ParameterDict.setattr: a Parameter has no attribute "
                                     f"{name!r}")
            setattr(p, name, value)

    # -- files ----------------------------------------------------------------
    def save(self, filename, strip_prefix=""):
        """Write every Parameter (its device average) to ``filename`` under
        its key with ``strip_prefix`` removed.

        Parameters
        ----------
        filename : str
            The file (MXNet's NDArray format).
        strip_prefix : str, default ''
            Removed from the front of every name; a name without it is an
            error.
        """
        from ..serialization import save
        out = {}
        for name, p in self.items():
            if not name.startswith(strip_prefix):
                raise ParameterError(f"Prefix {strip_prefix!r} is to be striped before saving, "
                                     f"but Parameter's name {name!r} does not start with "
                                     f"{strip_prefix!r}. If you are using Block.save_params, "
                                     f"this may be due to your Block shares parameters from "
                                     f"other Blocks or you forgot to use "
                                     f"``with name_scope()`` when creating child blocks.")
            out[name[len(strip_prefix):]] = p._reduce()
        save(filename, out)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current", device=None):
        """Load Parameters from ``filename`` by name.

        Parameters
        ----------
        filename : str
            A file written by ``save`` (``arg:``/``aux:`` keys accepted).
        ctx : Device or list of Devices, optional
            Where to initialize Parameters that are not initialized yet.
        allow_missing : bool, default False
            Leave Parameters the file lacks as they are.
        ignore_extra : bool, default False
            Skip names of the file this dictionary does not hold.
        restore_prefix : str, default ''
            Prepended to every name of the file.
        cast_dtype : bool, default False
            Cast the saved arrays whose dtype differs.
        dtype_source : {'current', 'saved'}
            With ``cast_dtype``: which dtype wins.
        device : Device or list of Devices, optional
            The same as ``ctx``.
        """
        from ..ndarray.files import load
        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise ParameterError(f"ParameterDict.load: {filename} holds an unnamed list of "
                                 f"arrays, not parameters")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source, device)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current",
                  device=None):
        """Set Parameters from ``param_dict`` (name -> NDArray); the
        arguments are ``load``'s.  Everything is checked before anything is
        set.

        Parameters
        ----------
        param_dict : dict
            Name -> NDArray or numpy array.
        ctx, allow_missing, ignore_extra, restore_prefix, cast_dtype, dtype_source, device
            As for ``load``.
        filename : str, optional
            Named in error messages.
        """
        device = _merge_devices(device, ctx, "ParameterDict.load")
        if dtype_source not in ("current", "saved"):
            raise ParameterError(f"ParameterDict.load: dtype_source={dtype_source!r}: expected "
                                 f"'current' or 'saved'")
        if restore_prefix:
            for name in self:
                if not name.startswith(restore_prefix):
                    raise ParameterError(f"restore_prefix is {restore_prefix!r} but Parameter's "
                                         f"name {name!r} does not start with {restore_prefix!r}")
        n = len(restore_prefix)
        arrays = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                  for k, v in param_dict.items()}
        source = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self:
                if name not in arrays:
                    raise ParameterError(
                        f"Parameter {name[n:]!r} is missing in {source}, which contains "
                        f"parameters: {_brief(k[n:] for k in arrays)}. Please make sure source and "
                        f"target networks have the same prefix.")
        plan = []
        for name, arr in arrays.items():
            if name not in self:
                if not ignore_extra:
                    raise ParameterError(
                        f"Parameter {name[n:]!r} loaded from {source} is not present in "
                        f"ParameterDict, choices are: {_brief(k[n:] for k in self)}. Set "
                        f"ignore_extra to True to ignore. Please make sure source and target "
                        f"networks have the same prefix.")
                continue
            p = dict.__getitem__(self, name)
            _check_load(p, name, arr, cast_dtype, source)
            plan.append((p, arr))
        for p, arr in plan:
            p._load_init(arr, device, cast_dtype=cast_dtype, dtype_source=dtype_source)


def _check_load(p, name, arr, cast_dtype, source):
    shape = tuple(arr.shape)
    if p.shape is not None and (len(p.shape) != len(shape) or
                                any(o not in (0, s) for o, s in zip(p.shape, shape))):
        raise ParameterError(f"Failed loading Parameter {name!r} from {source}: shape "
                             f"incompatible expected {p.shape} vs saved {shape}")
    if not cast_dtype and np.dtype(arr.dtype) != np.dtype(p.dtype):
        raise ParameterError(f"Failed loading Parameter {name!r} from {source}: it is "
                             f"{np.dtype(p.dtype).name} but the saved array is "
                             f"{np.dtype(arr.dtype).name}; pass cast_dtype=True to cast")


def _match(param, kwargs):
    """Check (or set) the attributes asked of an existing Parameter."""
    for k, v in kwargs.items():
        attr = _PRIVATE.get(k, k)
        existing = getattr(param, attr, None)
        if existing is None:
            if k == "shape":
                param.shape = v
            elif v is not None:
                setattr(param, attr, v)
            continue
        if k == "shape":
            want = _normalize_shape(param.name, v)
            if want is not None and len(want) == len(existing) and all(
                    a == b or a * b == 0 for a, b in zip(want, existing)):
                param._shape = tuple(max(a, b) for a, b in zip(want, existing))
                continue
        elif k == "dtype":
            try:
                if np.dtype(v) == np.dtype(existing):
                    continue
            except TypeError:
                pass
        elif v is None or v == existing:
            continue
        raise ParameterError(f"Cannot retrieve Parameter {param.name!r} because desired "
                             f"attribute does not match with stored for attribute {k!r}: "
                             f"desired {v!r} vs stored {existing!r}.")


__all__ = ["ParameterDict", "MissingParameterError"]
