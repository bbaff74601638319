"""Imports every op family so that each registers its ops.  A new family
file is added here and nowhere else."""
from . import (activations_nn, batch_norm, cast, concat_slice, convolution, ctc,  # noqa: F401
               deformable_convolution, depth_space, dropout, elemwise_binary, elemwise_math,
               elemwise_unary, embedding, indexing, layer_norm, matrix, pad_resize, pooling,
               optimizer, reduce, regression, reshape, rnn, sequence, shape, softmax, swapaxis,
               topk)
from . import (gather_nd, index_contrib, index_legacy, shape_gather)  # noqa: F401
