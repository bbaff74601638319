"""Embedding (Gluon 2.0): a lookup table of ``input_dim`` rows of
``output_dim`` values (op ``Embedding``)."""
import warnings

from ...dtype import as_dtype
from ...errors import NbdlError
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter


class Embedding(HybridBlock):
    """Maps integer ids (any shape) to rows of ``weight`` (input_dim,
    output_dim); ids are clipped to [0, input_dim).  ``sparse_grad=True``
    is accepted but the gradient is dense (nbdl has dense storage only; the
    numbers are the same)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        input_dim, output_dim = int(input_dim), int(output_dim)
        if input_dim <= 0 or output_dim <= 0:
            raise NbdlError(f"Embedding: input_dim and output_dim must be positive, got "
                            f"{input_dim} and {output_dim}")
        if sparse_grad:
            warnings.warn("Embedding: sparse_grad=True is not supported (dense storage only); "
                          "the weight gets a dense gradient", stacklevel=2)
        self._dtype = as_dtype(dtype).name
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": self._dtype}
        self.weight = Parameter("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                dtype=dtype, allow_deferred_init=True)

    def forward(self, x):
        return call_op("Embedding", [x, self.weight.data()], name=self._fwd_name(),
                       **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return f"Embedding({kw['input_dim']} -> {kw['output_dim']}, {kw['dtype']})"
