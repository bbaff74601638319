"""The base of MXNet 1.x's symbolic RNN cells: ``BaseRNNCell`` (step,
states, ``unroll``, weight packing), ``RNNParams`` (variables shared between
cells) and ``normalize_sequence`` (a sequence as one Symbol or a Symbol per
step).

A cell is called on one time step's input and the previous states and
returns ``(output, new_states)``; ``unroll`` steps it over a sequence.
Begin states default to ``sym.zeros(shape=(0, num_hidden))``, whose batch
dim the graph's shape inference finds from the data (``nbdl.graph.infer``).
"""
from .. import symbol
from ..errors import ArgumentError, GraphError
from ..ndarray import concatenate
from ..symbol import Symbol

__all__ = ["RNNParams", "BaseRNNCell", "normalize_sequence"]


def normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` as a list of ``length`` per-step Symbols (``merge`` False)
    or one Symbol with the time axis of ``layout`` (``merge`` True), and that
    axis; ``merge`` None leaves them as they are.

    Parameters
    ----------
    length : int or None
        Number of time steps.
    inputs : Symbol or list of Symbol
        One sequence Symbol, or a Symbol per step.
    layout : str
        ``'NTC'`` or ``'TNC'`` (where ``T`` is).
    merge : bool or None
        What to return (see above).
    in_layout : str, optional
        The layout ``inputs`` has, when it differs from ``layout``.
    """
    if inputs is None:
        raise ArgumentError("unroll: inputs=None is not supported (MXNet deprecated it); "
                            "create the input variables outside unroll")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ArgumentError("unroll does not take a grouped Symbol as its inputs; "
                                    "pass list(inputs), or one Symbol for unroll to split")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise ArgumentError(f"unroll: {len(inputs)} inputs for length {length}")
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The variables of RNN cells, shared by cells given the same container.

    Parameters
    ----------
    prefix : str, optional
        Put before the names of the variables it creates.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created (``sym.Variable(name,
        **kwargs)``) on first use.

        Parameters
        ----------
        name : str
            The name without the prefix.
        **kwargs
            Passed to ``sym.Variable`` when it is created (``init``, ``shape``, ...).
        """
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Base class of the symbolic RNN cells.

    A subclass defines ``__call__(inputs, states)`` (one step) and
    ``state_info``, and ``_gate_names`` when its weights stack several gates.

    Parameters
    ----------
    prefix : str, optional
        Put before the names of the cell's nodes (and of its weights when
        ``params`` is None).
    params : RNNParams, optional
        Variables shared with other cells; a new container when None.
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before building another graph with the cell."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step: ``(output, new_states)``.

        Parameters
        ----------
        inputs : Symbol
            The step's input, ``(batch, features)``.
        states : list of Symbol
            The previous states (``begin_state()`` at the first step).
        """
        raise GraphError(f"{type(self).__name__} defines no step (__call__); a cell class "
                         f"must, or be unrolled as a whole")

    @property
    def params(self):
        """The cell's ``RNNParams`` (after this, the cell no longer owns them)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """``[{'shape': ..., '__layout__': ...}]``, one dict per state."""
        raise GraphError(f"{type(self).__name__} defines no state_info")

    @property
    def state_shape(self):
        """The shapes of the states (``0`` for the unknown batch dim)."""
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_unmodified(self):
        if self._modified:
            raise GraphError(f"{type(self).__name__}: after a modifier cell (DropoutCell, "
                             f"ZoneoutCell, ResidualCell) wraps this cell, use the modifier "
                             f"cell instead")

    def begin_state(self, func=None, **kwargs):
        """The states for the first step.

        Parameters
        ----------
        func : callable, optional
            Makes each state from ``name=`` and the state's ``shape`` and
            ``__layout__``: ``sym.zeros`` (default), ``sym.uniform``,
            ``sym.Variable`` (to feed the states as inputs), ...
        **kwargs
            More arguments for ``func`` (``dtype``, ...).
        """
        self._check_unmodified()
        func = symbol.zeros if func is None else func
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """Split the gates' stacked weights into one array per gate
        (``lstm_i2h_weight`` -> ``lstm_i2h_i_weight``, ``_f_``, ``_c_``, ``_o_``).

        Parameters
        ----------
        args : dict of str to NDArray
            Parameters, e.g. ``Module.get_params()[0]``.

        Returns
        -------
        dict of str to NDArray
            A new dict with this cell's weights unpacked.
        """
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``.

        Parameters
        ----------
        args : dict of str to NDArray
            Parameters with this cell's weights unpacked.

        Returns
        -------
        dict of str to NDArray
        """
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{gate}_{kind}")
                         for gate in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = concatenate(parts)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Step the cell ``length`` times.

        Parameters
        ----------
        length : int
            Number of time steps.
        inputs : Symbol or list of Symbol
            One Symbol of layout ``layout`` (split into steps here), or one
            ``(batch, features)`` Symbol per step.
        begin_state : list of Symbol, optional
            The first states (``begin_state()`` by default).
        layout : str, optional
            ``'NTC'`` or ``'TNC'``.
        merge_outputs : bool, optional
            True: one Symbol of layout ``layout``; False: a list of per-step
            Symbols; None: whichever the cell makes.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            The states after the last step.
        """
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _step_name(self):
        """Count a step and give its node names' start (``lstm_t0_``)."""
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)
