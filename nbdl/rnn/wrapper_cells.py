"""MXNet 1.x's symbolic cells that hold, wrap or modify other cells
(``SequentialRNNCell``, ``BidirectionalCell``, ``ModifierCell``,
``ZoneoutCell``, ``ResidualCell``) and ``DropoutCell``."""
from .. import symbol
from ..errors import ArgumentError, GraphError
from ..symbol import Symbol
from .cell_base import BaseRNNCell, normalize_sequence

__all__ = ["SequentialRNNCell", "BidirectionalCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell"]


class _CellGroup(BaseRNNCell):
    """What the cells holding other cells (``self._cells``) share: their
    states and weights are the children's, in order."""

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        """The children's first states, in order (see ``BaseRNNCell.begin_state``)."""
        self._check_unmodified()
        return [state for cell in self._cells for state in cell.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def _share_params(self, cells):
        """Make ``cells``' variables and the group's one set: the group's
        ``params`` (when it was given some) go to the cells, which must then
        own theirs, and the cells' go to the group."""
        if self._override_cell_params:
            if not all(cell._own_params for cell in cells):
                name = type(self).__name__
                raise ArgumentError(f"{name}: give params to the {name} or to its cells, "
                                    f"not both")
            for cell in cells:
                cell.params._params.update(self.params._params)
        for cell in cells:
            self.params._params.update(cell.params._params)


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
        self._share_params([cell])

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
        self._share_params([l_cell, r_cell])
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
