"""Gluon's ``nn`` layers (and, as in MXNet 1.x, the Block classes)."""
from ..block import Block  # noqa: F401
from ..hybrid_block import HybridBlock  # noqa: F401
from ..symbol_block import SymbolBlock  # noqa: F401
from .basic_layers import (Activation, Concatenate, Dense, Dropout, Flatten, HybridConcatenate,  # noqa: F401
                           HybridLambda, HybridSequential, Identity, Lambda, Sequential)
from .conv_layers import (AvgPool1D, AvgPool2D, AvgPool3D, Conv1D, Conv1DTranspose,  # noqa: F401
                          Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose, GlobalAvgPool1D,
                          GlobalAvgPool2D, GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D,
                          GlobalMaxPool3D, MaxPool1D, MaxPool2D, MaxPool3D, PixelShuffle1D,
                          PixelShuffle2D, PixelShuffle3D, ReflectionPad2D)
from .deformable_conv_layers import DeformableConvolution, ModulatedDeformableConvolution  # noqa: F401
from .norm_layers import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, SyncBatchNorm  # noqa: F401
from .activations import ELU, GELU, LeakyReLU, PReLU, SELU, SiLU, Swish  # noqa: F401
from .embedding import Embedding  # noqa: F401
