"""Gluon's ``nn`` layers."""
from .basic_layers import (Activation, Concatenate, Dense, Dropout, Flatten, HybridConcatenate,  # noqa: F401
                           HybridLambda, HybridSequential, Identity, Lambda, Sequential)
