"""Gluon's recurrent cells that stack, wrap or modify other cells
(``SequentialRNNCell``, ``HybridSequentialRNNCell``, ``ModifierCell``,
``ResidualCell``, ``BidirectionalCell``, ``ZoneoutCell``,
``VariationalDropoutCell``) and ``DropoutCell``."""
from ..._docs import shared_doc
from ...errors import NbdlError
from .._trace import call_op
from .cell_base import (HybridRecurrentCell, RecurrentCell, _check_valid_length, _mask_outputs,
                        _merge_time, _split_time)

__all__ = ["SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ResidualCell", "BidirectionalCell", "ZoneoutCell", "VariationalDropoutCell"]


# the arguments of a modifier cell's unroll but valid_length
_UNROLL = """
length : int
    The number of time steps.
inputs : NDArray, Symbol or list of them
    The sequence.
begin_state : list, optional
    The base cell's states.
layout : str, default 'NTC'
    The layout of merged inputs and outputs.
merge_outputs : bool or None
    Whether to return one merged output.
"""


class _SequentialMixin:
    def add(self, cell):
        """Append a cell to the stack.

        Parameters
        ----------
        cell : RecurrentCell
            The cell (a HybridRecurrentCell in a HybridSequentialRNNCell).
        """
        self.register_child(cell)

    def state_info(self, batch_size=0):
        """Every cell's ``state_info``, in order.

        Parameters
        ----------
        batch_size : int
            The batch size.
        """
        return [i for c in self._children.values() for i in c.state_info(batch_size)]

    def _zero_states(self, x):
        # each child sizes its own states (dense or convolutional); the batch comes from x
        return [z for c in self._children.values() for z in c._zero_states(x)]

    def forward(self, inputs, states):
        """One time step through every cell in order, each cell taking its
        slice of ``states``; returns ``(output, new states)``.

        Parameters
        ----------
        inputs : NDArray or Symbol
            The step's input (batch, features).
        states : list
            Every cell's states, in order.
        """
        new, p = [], 0
        for cell in self._children.values():
            n = len(cell.state_info())
            inputs, st = cell(inputs, list(states[p:p + n]))
            new.extend(st)
            p += n
        return inputs, new

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the stack layer by layer, as MXNet 1.x does: each cell is
        unrolled over the whole sequence on the previous cell's outputs (so
        cells that cannot be stepped, such as BidirectionalCell, can be
        stacked); returns ``(outputs, states)`` with every cell's states in
        order.

        Parameters
        ----------
        length : int
            The number of time steps.
        inputs : NDArray, Symbol or list of them
            The sequence (``layout``), or one input per step.
        begin_state : list, optional
            The states of all the cells in order (default: zeros).
        layout : str, default 'NTC'
            Where the time axis of merged inputs and outputs is.
        merge_outputs : bool or None
            True: one merged output; False or None: a list, one per step.
        valid_length : NDArray or Symbol, optional
            Each sequence's length, shape (batch_size,).
        """
        _check_valid_length(self, valid_length)
        self.reset()
        cells = list(self._children.values())
        states, p = [], 0
        for k, cell in enumerate(cells):
            n = len(cell.state_info())
            begin = None if begin_state is None else list(begin_state[p:p + n])
            p += n
            inputs, st = cell.unroll(length, inputs, begin_state=begin, layout=layout,
                                     merge_outputs=merge_outputs if k == len(cells) - 1 else None,
                                     valid_length=valid_length)
            states.extend(st)
        return inputs, states

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        return list(self._children.values())[i]


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """Stacks cells: each step feeds one cell's output to the next."""


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """Hybridizable stack of cells."""


class DropoutCell(HybridRecurrentCell):
    """Applies dropout to the input; no state."""

    def _alias(self):
        return "dropout"

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate, self._axes = float(rate), tuple(axes)

    def state_info(self, batch_size=0):
        return []

    def forward(self, inputs, states):
        if self._rate > 0:
            inputs = call_op("Dropout", [inputs], p=self._rate, axes=self._axes)
        return inputs, list(states)


class ModifierCell(HybridRecurrentCell):
    """A cell wrapping ``base_cell`` and changing what it computes
    (``ZoneoutCell``, ``ResidualCell`` derive from it); states are the base
    cell's.

    Parameters
    ----------
    base_cell : RecurrentCell
        The wrapped cell.
    **kwargs
        HybridRecurrentCell's arguments.
    """
    def __init__(self, base_cell, **kwargs):
        super().__init__(**kwargs)
        self.base_cell = base_cell

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def _zero_states(self, x):
        return self.base_cell._zero_states(x)

    def reset(self):
        super().reset()
        self.base_cell.reset()


class ResidualCell(ModifierCell):
    """``output = base_cell(x) + x``."""

    def forward(self, inputs, states):
        out, states = self.base_cell(inputs, states)
        return call_op("elemwise_add", [out, inputs]), states

    @shared_doc(unroll=_UNROLL)
    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the base cell over the sequence, then add the inputs to its
        outputs (so a BidirectionalCell can be the base cell); parameters as
        ``RecurrentCell.unroll``.

        Parameters
        ----------
        {unroll}
        valid_length : NDArray or Symbol, optional
            Each sequence's length; inputs past it are not added.
        """
        _check_valid_length(self, valid_length)
        self.reset()
        outputs, states = self.base_cell.unroll(length, inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs,
                                                valid_length=valid_length)
        steps, axis = _split_time(inputs, length, layout)
        if valid_length is not None:
            steps = _mask_outputs(steps, length, valid_length, axis, False)
        if isinstance(outputs, (list, tuple)):
            return [call_op("elemwise_add", [o, x]) for o, x in zip(outputs, steps)], states
        return call_op("elemwise_add", [outputs, _merge_time(steps, axis)]), states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates
    their outputs; only ``unroll`` is defined (a single step has no direction)."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(output_prefix, str):
            raise NbdlError(f"BidirectionalCell: output_prefix must be a str, got "
                            f"{output_prefix!r}")
        self.l_cell, self.r_cell = l_cell, r_cell
        self._output_prefix = output_prefix

    def state_info(self, batch_size=0):
        return self.l_cell.state_info(batch_size) + self.r_cell.state_info(batch_size)

    def forward(self, inputs, states):
        raise NbdlError("BidirectionalCell cannot be stepped; use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        _check_valid_length(self, valid_length)
        self.reset()
        steps, axis = _split_time(inputs, length, layout)
        nl = len(self.l_cell.state_info())
        if begin_state is None:
            begin_state = self.l_cell._zero_states(steps[0]) + self.r_cell._zero_states(steps[0])
        r_steps = _reversed_steps(steps, length, valid_length)
        l_out, l_st = self.l_cell.unroll(length, steps, begin_state[:nl], layout,
                                         merge_outputs=False, valid_length=valid_length)
        r_out, r_st = self.r_cell.unroll(length, r_steps, begin_state[nl:], layout,
                                         merge_outputs=False, valid_length=valid_length)
        r_out = _reversed_steps(r_out, length, valid_length)
        outputs = [call_op("Concat", [a, b], dim=1, num_args=2,
                           name=f"{self._output_prefix}t{t}")
                   for t, (a, b) in enumerate(zip(l_out, r_out))]
        if merge_outputs or (merge_outputs is None and valid_length is not None):
            outputs = _merge_time(outputs, axis)
        return outputs, list(l_st) + list(r_st)


def _reversed_steps(steps, length, valid_length):
    """The time steps in reverse order; with ``valid_length`` each sequence is
    reversed within its own length (Gluon: SequenceReverse)."""
    if valid_length is None:
        return steps[::-1]
    rev = call_op("SequenceReverse", [_merge_time(steps, 0), valid_length],
                  use_sequence_length=True, axis=0)
    return _split_time(rev, length, "TNC")[0]


def _check_rate(cls, name, p):
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise NbdlError(f"{cls}: {name}={p} is invalid: it must be in [0, 1)")
    return p


def _dropout_mask(like, p):
    """Ones scaled by dropout: zero with probability ``p`` while training,
    all ones (the identity) otherwise."""
    return call_op("Dropout", [call_op("ones_like", [like])], p=p)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): while training, each element of the output
    and of the states keeps its previous value with probability
    ``zoneout_outputs`` / ``zoneout_states`` instead of taking the new one
    (Gluon's ``rnn.ZoneoutCell``).  Outside training it is the base cell."""

    def _alias(self):
        return "zoneout"

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0, **kwargs):
        if isinstance(base_cell, BidirectionalCell):
            raise NbdlError("ZoneoutCell: a BidirectionalCell cannot be wrapped (it cannot be "
                            "stepped); wrap its l_cell and r_cell instead")
        super().__init__(base_cell, **kwargs)
        self.zoneout_outputs = _check_rate("ZoneoutCell", "zoneout_outputs", zoneout_outputs)
        self.zoneout_states = _check_rate("ZoneoutCell", "zoneout_states", zoneout_states)
        self._prev_output = None

    def reset(self):
        super().reset()
        self._prev_output = None

    def forward(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)
        p_out, p_st = self.zoneout_outputs, self.zoneout_states
        output = next_output
        if p_out:
            prev = self._prev_output
            if prev is None:
                prev = call_op("zeros_like", [next_output])
            output = call_op("where", [_dropout_mask(next_output, p_out), next_output, prev])
        if p_st:
            next_states = [call_op("where", [_dropout_mask(new, p_st), new, old])
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, list(next_states)

    def __repr__(self):
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani): one dropout mask per sequence,
    drawn at its first step and reused at every step, on the inputs, on the
    first state (``h``) and on the outputs (Gluon's
    ``rnn.VariationalDropoutCell``).  ``unroll`` (or ``reset``) starts new
    masks."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0, **kwargs):
        if drop_states and isinstance(base_cell, (BidirectionalCell, SequentialRNNCell,
                                                  HybridSequentialRNNCell)):
            raise NbdlError(f"VariationalDropoutCell: drop_states={drop_states} needs a cell "
                            f"whose first state is h, not a {type(base_cell).__name__}; wrap "
                            f"the inner cells instead")
        super().__init__(base_cell, **kwargs)
        name = "VariationalDropoutCell"
        self.drop_inputs = _check_rate(name, "drop_inputs", drop_inputs)
        self.drop_states = _check_rate(name, "drop_states", drop_states)
        self.drop_outputs = _check_rate(name, "drop_outputs", drop_outputs)
        self.reset()

    def reset(self):
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    @shared_doc(unroll=_UNROLL)
    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """As ``RecurrentCell.unroll``; without ``drop_states`` and with
        ``merge_outputs=None`` the outputs come merged (MXNet 1.x).

        Parameters
        ----------
        {unroll}
        valid_length : NDArray or Symbol, optional
            Each sequence's length.
        """
        if merge_outputs is None and not self.drop_states:
            merge_outputs = True
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=valid_length)

    def forward(self, inputs, states):
        if self.drop_states:
            if self.drop_states_mask is None:
                self.drop_states_mask = _dropout_mask(states[0], self.drop_states)
            states = [call_op("elemwise_mul", [states[0], self.drop_states_mask])] + \
                list(states[1:])
        if self.drop_inputs:
            if self.drop_inputs_mask is None:
                self.drop_inputs_mask = _dropout_mask(inputs, self.drop_inputs)
            inputs = call_op("elemwise_mul", [inputs, self.drop_inputs_mask])
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = _dropout_mask(output, self.drop_outputs)
            output = call_op("elemwise_mul", [output, self.drop_outputs_mask])
        return output, list(next_states)

    def __repr__(self):
        return (f"VariationalDropoutCell(drop_inputs={self.drop_inputs}, drop_states="
                f"{self.drop_states}, drop_outputs={self.drop_outputs}, {self.base_cell!r})")
