"""Imports every op family so that each registers its ops.  A new family
file is added here and nowhere else."""
from . import (activations_nn, batch_norm, cast, concat_slice, convolution, conv_fused, ctc,  # noqa: F401
               deformable_convolution, depth_space, dropout, elemwise_binary, elemwise_math,
               elemwise_unary, embedding, indexing, layer_norm, matrix, pad_resize, pooling,
               reduce, regression, reshape, rnn, sequence, shape, softmax, swapaxis, topk)
from . import detection_box, detection_multibox  # noqa: F401
from . import random, random_pdf  # noqa: F401
from . import (adaptive_pooling, bilinear_resize, contrib_elemwise, crop, im2col,  # noqa: F401
               kl_sparse_reg, nn_normalization, nn_softmax, roi, svm_output)
from . import (gather_nd, index_contrib, index_legacy, linalg, linalg_factor,  # noqa: F401
               shape_gather)
from . import (array_checks, cumsum, histogram, reduce_norm, sort)  # noqa: F401
from . import custom, init_ops, optimizer, optimizer_multi  # noqa: F401
from . import hawkes, slice_assign, transformer  # noqa: F401
from . import sync_batch_norm  # noqa: F401
from . import spatial_transformer  # noqa: F401
from . import correlation  # noqa: F401
from . import roi_contrib  # noqa: F401
from . import image  # noqa: F401
from . import image_random  # noqa: F401
from . import count_sketch, fft  # noqa: F401
