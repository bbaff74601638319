"""MXNet 1.x's symbolic RNN cells (``mx.rnn``): build unrolled recurrent
graphs out of Symbols, with MXNet's node and parameter names
(``lstm_t0_i2h``, ``lstm_i2h_weight``), so 1.x training scripts, symbol
files and checkpoints work unchanged.

A cell is called on one time step's input and the previous states and
returns ``(output, new_states)``; ``unroll`` steps it over a sequence.
Begin states default to ``sym.zeros(shape=(0, num_hidden))``, whose batch
dim the graph's shape inference finds from the data (``nbdl.graph.infer``).
``FusedRNNCell`` (one ``RNN`` op) is in ``fused.py``, the convolutional
cells in ``conv_rnn_cell.py``.
"""
from .. import symbol
from ..errors import ArgumentError, GraphError
from ..initializer import LSTMBias
from ..ndarray import concatenate
from ..symbol import Symbol

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def _cells_state_info(cells):
    return sum([c.state_info for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


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


class _DenseCell(BaseRNNCell):
    """What the FullyConnected cells share: the four variables and
    ``_num_states`` states of shape ``(0, num_hidden)``."""

    _num_states = 1

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = (self.params.get("i2h_bias") if i2h_bias_init is None
                    else self.params.get("i2h_bias", init=i2h_bias_init))
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}
                for _ in range(self._num_states)]


def lstm_update(gates, prev_c, name, activation, axis=None):
    """The LSTM's gating from the summed ``i2h + h2h`` (gates i, f, c, o
    along ``axis``, 1 by default): ``(next_h, next_c)``; ``activation(x,
    name=None)`` is the candidate's and the cell state's activation."""
    gates = symbol.SliceChannel(gates, num_outputs=4, name=f"{name}slice",
                                **({} if axis is None else {"axis": axis}))
    in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
    forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
    in_transform = activation(gates[2], name=f"{name}c")
    out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
    next_c = symbol._plus(forget_gate * prev_c, in_gate * in_transform, name=f"{name}state")
    next_h = symbol._mul(out_gate, activation(next_c), name=f"{name}out")
    return next_h, next_c


def gru_update(i2h, h2h, prev_h, name, activation):
    """The GRU's gating (cuDNN's form) from ``i2h`` and ``h2h`` (gates r, z,
    o): the next state; ``activation(x, name=None)`` is the candidate's."""
    i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
    h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
    reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
    update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
    next_h_tmp = activation(i2h + reset_gate * h2h, name=f"{name}_h_act")
    return symbol._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h,
                        name=f"{name}out")


def _tanh(x, name=None):
    return symbol.Activation(x, act_type="tanh", name=name)


class RNNCell(_DenseCell):
    """Elman RNN cell: ``out = activation(i2h(x) + h2h(h))``.

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    activation : str or callable, optional
        ``'tanh'`` (default), ``'relu'``, ... or a function of a Symbol.
    prefix : str, optional
        ``'rnn_'`` by default.
    params : RNNParams, optional
        Shared variables.
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(_DenseCell):
    """LSTM cell (gates i, f, c, o stacked in that order in the weights).

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    prefix : str, optional
        ``'lstm_'`` by default.
    params : RNNParams, optional
        Shared variables.
    forget_bias : float, optional
        Initial bias of the forget gate (``init.LSTMBias`` on ``i2h_bias``).
    """

    _num_states = 2

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params, LSTMBias(forget_bias=forget_bias))

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}h2h")
        next_h, next_c = lstm_update(i2h + h2h, states[1], name, _tanh)
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    """GRU cell as cuDNN computes it (gates r, z, o stacked in that order).

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    prefix : str, optional
        ``'gru_'`` by default.
    params : RNNParams, optional
        Shared variables.
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_h2h")
        next_h = gru_update(i2h, h2h, prev_h, name, _tanh)
        return next_h, [next_h]


class _CellGroup(BaseRNNCell):
    """What the cells holding other cells (``self._cells``) share: their
    states and weights are the children's, in order."""

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        """The children's first states, in order (see ``BaseRNNCell.begin_state``)."""
        self._check_unmodified()
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)


class SequentialRNNCell(_CellGroup):
    """Cells stacked one on another: each cell's output is the next one's input.

    Parameters
    ----------
    params : RNNParams, optional
        Variables for all the cells added (then the cells must own theirs).
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` to the stack.

        Parameters
        ----------
        cell : BaseRNNCell
            Takes the previous cell's output (or the input) as its input.
        """
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ArgumentError("SequentialRNNCell: give params to the SequentialRNNCell "
                                    "or to its cells, not both")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise GraphError("SequentialRNNCell: a BidirectionalCell cannot be stepped; "
                                 "unroll the stack instead")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1
                                         else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input (no state).

    Parameters
    ----------
    dropout : float
        Fraction of the elements dropped in training.
    prefix : str, optional
        ``'dropout_'`` by default.
    params : RNNParams, optional
        Unused (the cell has no variables); kept for MXNet's signature.
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise ArgumentError(f"DropoutCell: dropout must be a number, got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of the cells that wrap a cell and change what it computes
    (``ZoneoutCell``, ``ResidualCell``); the wrapped cell is then used only
    through the modifier.

    Parameters
    ----------
    base_cell : BaseRNNCell
        The cell to modify.
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=None, **kwargs):
        """The base cell's first states (see ``BaseRNNCell.begin_state``;
        ``init_sym`` is its ``func``)."""
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): in training, each output and state
    element keeps its previous value with probability ``zoneout_outputs`` /
    ``zoneout_states``.

    Parameters
    ----------
    base_cell : BaseRNNCell
        A cell that can be stepped (not fused, not bidirectional).
    zoneout_outputs : float, optional
        Probability of keeping the previous output.
    zoneout_states : float, optional
        Probability of keeping the previous state.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell) or hasattr(base_cell, "unfuse"):
            raise ArgumentError(f"ZoneoutCell: a {type(base_cell).__name__} cannot be stepped; "
                                f"unfuse it, or wrap the cells underneath")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = (self.prev_output if self.prev_output is not None
                       else symbol.zeros((0, 0)))
        output = (symbol.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([symbol.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the cell's input to its output (Wu et al. 2016).

    Parameters
    ----------
    base_cell : BaseRNNCell
        The cell whose output gets the residual connection.
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, Symbol)
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual")
        else:
            outputs = [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                       for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(_CellGroup):
    """Runs one cell forward and one backward over the sequence and
    concatenates their outputs (features axis).

    Parameters
    ----------
    l_cell : BaseRNNCell
        The forward cell.
    r_cell : BaseRNNCell
        The backward cell.
    params : RNNParams, optional
        Variables for both cells (then the cells must own theirs).
    output_prefix : str, optional
        Names of the outputs (``'bi_'``: ``bi_t0``, ... or ``bi_out``).
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise ArgumentError("BidirectionalCell: give params to the BidirectionalCell "
                                    "or to its cells, not both")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, Symbol) and isinstance(r_outputs, Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=(f"{self._output_prefix}out" if merge_outputs
                                       else f"{self._output_prefix}t{i}"))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]
