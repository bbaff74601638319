"""``nbdl.random``: seeding and sampling, as MXNet's ``mx.random``.

``nbdl.random.seed(n)`` seeds nbdl's numpy Generator (used by the samplers
below) and the RNG of compiled kernels (Dropout's masks)."""
from .ndarray.random import (exponential, gamma, generator, normal, poisson, randint,  # noqa: F401
                             randn, seed, shuffle, uniform)
