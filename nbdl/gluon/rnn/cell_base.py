"""The base of Gluon's recurrent cells: ``RecurrentCell`` /
``HybridRecurrentCell`` (a step's ``forward(inputs, states)`` returning
``(output, new_states)``, ``unroll`` over a sequence with ``valid_length``
masking, begin states, step counters for MXNet 1.x node names) and the
helpers that split, merge and mask a sequence with registered ops."""
from ...errors import NbdlError
from .._trace import call_op
from ..block import Block
from ..hybrid_block import HybridBlock

__all__ = ["RecurrentCell", "HybridRecurrentCell"]


def _zeros_like_batch(x, size):
    """Zeros of shape (N, size) from a step input (N, C), with registered ops."""
    z = call_op("zeros_like", [call_op("slice_axis", [x], axis=1, begin=0, end=1)])
    return call_op("broadcast_axis", [z], axis=1, size=size)


def _split_time(inputs, length, layout):
    axis = layout.find("T")
    if isinstance(inputs, (list, tuple)):
        if len(inputs) != length:
            raise NbdlError(f"unroll: got {len(inputs)} inputs for length={length}")
        return list(inputs), axis
    if length == 1:
        return [call_op("squeeze", [inputs], axis=axis)], axis
    out = call_op("SliceChannel", [inputs], num_outputs=length, axis=axis, squeeze_axis=True)
    return [out[i] for i in range(length)], axis


def _merge_time(outputs, axis):
    parts = [call_op("expand_dims", [o], axis=axis) for o in outputs]
    return call_op("Concat", parts, dim=axis, num_args=len(parts))


def _check_valid_length(cell, valid_length):
    shape = getattr(valid_length, "shape", None)
    if valid_length is not None and shape is not None and len(shape) != 1:
        raise NbdlError(f"{type(cell).__name__}.unroll: valid_length must have shape "
                        f"(batch_size,), got shape {tuple(shape)}")


def _mask_outputs(outputs, length, valid_length, axis, merge_outputs):
    """Zero the outputs after each sequence's valid length (Gluon's
    ``_mask_sequence_variable_length``); a list stays a list unless merging."""
    merged = _merge_time(outputs, axis) if isinstance(outputs, (list, tuple)) else outputs
    masked = call_op("SequenceMask", [merged, valid_length], use_sequence_length=True,
                     axis=axis)
    if merge_outputs:
        return masked
    return _split_time(masked, length, "TNC" if axis == 0 else "NTC")[0]


class _CellMixin:
    def state_info(self, batch_size=0):
        """One dict per state (``shape``, ``__layout__``) for a batch of
        ``batch_size`` (0: unknown); every cell defines it.

        Parameters
        ----------
        batch_size : int
            The batch size.
        """
        raise NbdlError(f"{type(self).__name__} does not define state_info(); every recurrent "
                        f"cell subclass must")

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Initial states: ``func(shape, **kwargs)`` for each of
        ``state_info(batch_size)`` (zeros by default).

        Parameters
        ----------
        batch_size : int
            The batch size.
        func : callable, optional
            Makes one state from its shape (``nd.zeros`` by default;
            ``nd.random.uniform``...).
        **kwargs
            Passed to ``func`` (``dtype``, ``ctx``).
        """
        from ... import ndarray as nd
        func = func or nd.zeros
        return [func(info["shape"], **kwargs) for info in self.state_info(batch_size)]

    def _zero_states(self, x):
        return [_zeros_like_batch(x, info["shape"][1]) for info in self.state_info()]

    def reset(self):
        """Start a new sequence: the step counter (``t0`` in the names of
        the first step's graph nodes) restarts, here and in the child cells."""
        object.__setattr__(self, "_counter", -1)
        for child in self._children.values():
            if isinstance(child, _CellMixin):
                child.reset()

    def __call__(self, *args, **kwargs):
        object.__setattr__(self, "_counter", getattr(self, "_counter", -1) + 1)
        return super().__call__(*args, **kwargs)

    def _node(self, what):
        """MXNet 1.x's name of a step's graph node (``rnn_t0_out``) for a
        1.x-style cell, else None (an automatic name)."""
        if not self._legacy:
            return None   # the block's prefix comes from its trace's name scope
        return f"t{max(getattr(self, '_counter', 0), 0)}_{what}"

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Step the cell ``length`` times; returns ``(outputs, states)``.

        With ``valid_length`` (shape ``(batch,)``), as Gluon: outputs at steps
        ``t >= valid_length[b]`` are zero (SequenceMask) and the returned
        states are each sequence's states after its last valid step
        (SequenceLast over the stacked per-step states)."""
        _check_valid_length(self, valid_length)
        self.reset()
        steps, axis = _split_time(inputs, length, layout)
        states = begin_state if begin_state is not None else self._zero_states(steps[0])
        outputs, all_states = [], []
        for x in steps:
            out, states = self(x, states)
            outputs.append(out)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [call_op("SequenceLast", [_merge_time(list(per_step), 0), valid_length],
                              use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            # masked outputs are merged unless merge_outputs=False (MXNet 1.x)
            return _mask_outputs(outputs, length, valid_length, axis,
                                 merge_outputs is not False), states
        if merge_outputs:
            outputs = _merge_time(outputs, axis)
        return outputs, states


class RecurrentCell(_CellMixin, Block):
    """Base class of cells that are plain Blocks."""


class HybridRecurrentCell(_CellMixin, HybridBlock):
    """Base class of hybridizable cells."""
