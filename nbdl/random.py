"""``nbdl.random``: seeding and sampling, as MXNet's ``mx.random``.

``nbdl.random.seed(n, ctx='all')`` seeds the kernels' generators (the
samplers' and Dropout's, per device) and nbdl's host numpy Generator; the
samplers are ``nbdl.nd.random``'s (each runs an op of the op table)."""
from .ndarray.random import (exponential, gamma, generalized_negative_binomial,  # noqa: F401
                             generator, multinomial, negative_binomial, normal, poisson,
                             randint, randn, seed, shuffle, uniform)
