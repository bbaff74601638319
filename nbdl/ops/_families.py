"""Imports every op family so that each registers its ops.  A new family
file is added here and nowhere else."""
from . import (cast, concat_slice, ctc, dropout, elemwise_binary, elemwise_unary, embedding, indexing,  # noqa: F401
               layer_norm, matrix, reduce, regression, shape, softmax, swapaxis, topk)
from . import activations_nn, depth_space, pad_resize  # noqa: F401,E402  (activations, Pad/UpSampling, depth_to_space)
from . import batch_norm, pooling  # noqa: F401,E402  (Pooling; BatchNorm/InstanceNorm/GroupNorm)
from . import convolution  # noqa: F401,E402
from . import deformable_convolution  # noqa: F401,E402  (DeformableConvolution v1/v2)
from . import rnn  # noqa: F401,E402  (fused RNN/LSTM/GRU)
from . import sequence  # noqa: F401,E402  (SequenceMask/SequenceLast/SequenceReverse)
