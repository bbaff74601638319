"""CTCLoss: connectionist temporal classification, on the ``CTCLoss`` op."""
from ._base import Loss, apply_weighting, check_choice, op


class CTCLoss(Loss):
    """Connectionist temporal classification loss, one value per sample.

    ``layout``: ``'NTC'`` (batch, time, alphabet) or ``'TNC'`` for ``pred``,
    the unnormalised activations (log-softmax is applied inside).
    ``label_layout``: ``'NT'`` or ``'TN'`` for ``label``.  As in Gluon (1.x
    and 2.0) the blank is the *last* class: with an alphabet of ``C - 1``
    symbols, ``pred`` has ``C`` channels, labels are 0..C-2 and a label
    shorter than the padded length is padded with -1 (the op's
    ``blank_label='last'``).

    ``forward(pred, label, pred_lengths=None, label_lengths=None,
    sample_weight=None)``: ``pred_lengths`` / ``label_lengths`` ``(batch,)``
    give each sample's number of time steps / labels (then the padding
    value is not needed).  Returns ``(batch,)``; a label that cannot be
    aligned in the given time steps gives ``inf`` and a zero gradient."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        check_choice("CTCLoss", "layout", layout, ("NTC", "TNC"))
        check_choice("CTCLoss", "label_layout", label_layout, ("NT", "TN"))
        super().__init__(weight, label_layout.find("N"), **kwargs)
        self._layout = layout
        self._label_layout = label_layout

    def forward(self, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if self._layout == "NTC":
            pred = op("transpose", pred, axes=(1, 0, 2))
        if self._label_layout == "TN":
            label = op("transpose", label, axes=(1, 0))
        inputs = [pred, label] + [x for x in (pred_lengths, label_lengths) if x is not None]
        loss = op("CTCLoss", *inputs, use_data_lengths=pred_lengths is not None,
                  use_label_lengths=label_lengths is not None, blank_label="last")
        return apply_weighting(loss, self._weight, sample_weight)
