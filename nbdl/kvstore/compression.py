"""MXNet's 2-bit gradient compression, as a ``device`` KVStore applies it to
every pushed value: ``value + residual`` is quantized to ``threshold``,
``-threshold`` or 0 (``>= threshold`` and ``<= -threshold`` are the cut
points) and what the quantization dropped is kept as the residual of that
key and value slot (the position of the value in a push's list, i.e. its
device), to be added to the next push from the same slot."""
import numbers

import numpy as np

from ..errors import NbdlError


class CompressionError(NbdlError, ValueError):
    """Bad ``set_gradient_compression`` arguments."""


class TwoBitCompression:
    """Quantizes pushed values to three levels and keeps the residuals.

    Parameters
    ----------
    threshold : float
        The positive level; values at or beyond +-threshold become
        +-threshold, the rest 0.
    """

    def __init__(self, threshold=0.5):
        if not isinstance(threshold, numbers.Real) or isinstance(threshold, bool) \
                or not threshold > 0:
            raise CompressionError(f"set_gradient_compression: threshold must be a number "
                                   f"greater than 0, got {threshold!r}")
        self.threshold = float(threshold)
        self._residuals = {}      # (key, slot) -> numpy residual

    def compress(self, key, slot, value):
        """The quantized ``value`` (a numpy array) of ``key``'s ``slot``; the
        residual of that slot is updated.

        Parameters
        ----------
        key : int or str
            The KVStore key.
        slot : int
            The position of the value in the push (one slot per device).
        value : numpy.ndarray
            The value pushed.
        """
        residual = self._residuals.get((key, slot))
        if residual is None or residual.shape != value.shape or residual.dtype != value.dtype:
            residual = np.zeros(value.shape, value.dtype)
        total = value + residual
        t = value.dtype.type(self.threshold)
        quantized = np.where(total >= t, t, np.where(total <= -t, -t, value.dtype.type(0)))
        quantized = quantized.astype(value.dtype, copy=False)
        self._residuals[(key, slot)] = total - quantized
        return quantized


def from_params(compression_params):
    """The compression ``set_gradient_compression(compression_params)`` asks
    for.

    Parameters
    ----------
    compression_params : dict
        ``{'type': '2bit', 'threshold': 0.5}``; ``type`` is required and
        MXNet 1.9.1 knows only ``'2bit'``.
    """
    if not isinstance(compression_params, dict):
        raise CompressionError(f"set_gradient_compression: compression_params must be a dict, "
                               f"got {type(compression_params).__name__}")
    params = dict(compression_params)
    kind = params.pop("type", None)
    if kind is None:
        raise CompressionError(f"set_gradient_compression: compression_params "
                               f"{compression_params!r} has no 'type' (only '2bit' exists)")
    if kind != "2bit":
        raise CompressionError(f"set_gradient_compression: unknown type of gradient compression "
                               f"{kind!r}; only '2bit' exists")
    threshold = params.pop("threshold", 0.5)
    if params:
        raise CompressionError(f"set_gradient_compression: unknown arguments {sorted(params)} "
                               f"for '2bit' compression (it takes 'threshold')")
    if isinstance(threshold, str):
        try:
            threshold = float(threshold)
        except ValueError:
            raise CompressionError(f"set_gradient_compression: threshold must be a number, got "
                                   f"{threshold!r}") from None
    return TwoBitCompression(threshold)
