"""SymbolBlock: a Block around an existing Symbol (a file exported by
``HybridBlock.export`` or by MXNet, or internals of another graph)."""
from ..errors import NbdlError
from .hybrid_block import HybridBlock


class SymbolBlock(HybridBlock):
    """``SymbolBlock(outputs, inputs, params=None)``: ``inputs`` are the
    Symbol variables fed at call time; every other variable of ``outputs`` is
    a Parameter (arguments trainable, aux states not)."""

    def __init__(self, outputs, inputs, params=None):
        super().__init__()
        from ..symbol import Group, Symbol
        from .parameter import Parameter
        if isinstance(outputs, (list, tuple)):
            outputs = outputs[0] if len(outputs) == 1 else Group(list(outputs))
        inputs = [inputs] if isinstance(inputs, Symbol) else list(inputs)
        names = []
        for s in inputs:
            if not isinstance(s, Symbol) or len(s) != 1 or s.list_inputs() != [s.name]:
                raise NbdlError(f"SymbolBlock: inputs must be variables, got {s!r}")
            names.append(s.name)
        all_inputs = outputs.list_inputs()
        missing = [n for n in names if n not in all_inputs]
        if missing:
            raise NbdlError(f"SymbolBlock: inputs {missing} are not variables of the outputs "
                            f"(variables: {all_inputs})")
        aux = set(outputs.list_auxiliary_states())
        params = dict(params or {})
        for name in all_inputs:
            if name in names:
                continue
            p = params.get(name)
            if p is None:
                p = Parameter(name, grad_req="null" if name in aux else "write",
                              allow_deferred_init=True)
            p._var_name = name
            self._reg_params[name] = p
        object.__setattr__(self, "_symbol", outputs)
        object.__setattr__(self, "_input_names", names)
        object.__setattr__(self, "_active", True)

    def _collect_params_with_prefix(self, prefix=""):
        # variable names are the graph's own (MXNet's), not structural
        return dict(self._reg_params)

    def _own_1x_params(self):
        return list(self._reg_params.items())

    def forward(self, *args):
        """The graph applied to Symbols (composition); arrays run through the
        cached graph, which ``block(*arrays)`` uses (a SymbolBlock is always
        hybridized).

        Parameters
        ----------
        *args : Symbol
            One input a name of ``input_names``.
        """
        from ..symbol import Symbol
        if len(args) != len(self._input_names):
            raise NbdlError(f"SymbolBlock takes {len(self._input_names)} inputs "
                            f"({', '.join(self._input_names)}), got {len(args)}")
        if all(isinstance(a, Symbol) for a in args):
            return self._symbol(**dict(zip(self._input_names, args)))
        raise NbdlError("SymbolBlock runs its graph through hybridize (it is always hybridized)")

    def _trace(self, args):
        n = len(self._symbol)
        out_fmt = 0 if n == 1 else ("list", tuple(range(n)))
        in_fmt = ("tuple", tuple(range(len(self._input_names))))
        return self._symbol, list(self._input_names), in_fmt, out_fmt

    def hybridize(self, active=True, **kwargs):
        """Set the cached graph's flags (``static_alloc``...); a SymbolBlock
        stays hybridized whatever ``active`` says.

        Parameters
        ----------
        active : bool
            Ignored (a SymbolBlock is its graph).
        **kwargs
            ``HybridBlock.hybridize``'s flags.
        """
        super().hybridize(True, **kwargs)   # a SymbolBlock is its graph: always cached

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, device=None, allow_missing=False,
                ignore_extra=False, ctx=None):
        """Load ``symbol_file`` (and ``param_file``) into a SymbolBlock.

        Parameters
        ----------
        symbol_file : str
            The ``-symbol.json`` file.
        input_names : str or list of str
            The graph's input variables.
        param_file : str, optional
            The ``.params`` file.
        device : Device or list of Devices, optional
            Where to load the parameters.
        allow_missing : bool, default False
            Leave parameters the file lacks uninitialized.
        ignore_extra : bool, default False
            Skip the file's names the graph does not use.
        ctx : Device or list of Devices, optional
            MXNet 1.x's name of ``device``.
        """
        from .parameter_dict import _merge_devices
        device = _merge_devices(device, ctx, "SymbolBlock.imports")
        from ..symbol import load, var
        sym = load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        block = SymbolBlock(sym, [var(n) for n in input_names])
        if param_file is not None:
            block.load_parameters(param_file, device=device, allow_missing=allow_missing,
                                  ignore_extra=ignore_extra)
        return block
