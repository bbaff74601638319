"""MXNet 1.x's statistical test helpers (``mxnet.test_utils``): bucketed
chi-square checks of a sampler, mean and variance checks."""
import numpy as np


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equiprobable buckets of a distribution from its quantile
    function.

    Parameters
    ----------
    ppf : callable
        The inverse CDF (``scipy.stats.norm(0, 1).ppf``).
    nbuckets : int
        How many buckets.

    Returns
    -------
    (buckets, probs): a list of ``(low, high)`` pairs and their probabilities.
    """
    edges = [ppf(i / float(nbuckets)) for i in range(nbuckets + 1)]
    buckets = [(edges[i], edges[i + 1]) for i in range(nbuckets)]
    return buckets, [1.0 / nbuckets] * nbuckets


def _counts(samples, buckets):
    samples = np.asarray(samples).ravel()
    out = []
    for b in buckets:
        if isinstance(b, (tuple, list)):
            lo, hi = b
            out.append(int(np.count_nonzero((samples >= lo) & (samples < hi))))
        else:
            out.append(int(np.count_nonzero(samples == b)))
    return np.array(out, dtype=np.float64)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``nsamples`` draws of ``generator`` against
    the bucket probabilities.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns n samples (array-like).
    buckets : list
        ``(low, high)`` intervals (half-open) or single values (discrete).
    probs : list of float
        Each bucket's probability.
    nsamples : int
        Samples to draw.

    Returns
    -------
    (p_value, observed counts, expected counts)
    """
    from scipy import stats
    samples = generator(nsamples)
    obs = _counts(samples, buckets)
    expected = np.asarray(probs, dtype=np.float64) * nsamples
    keep = expected > 0
    stat = float(np.sum((obs[keep] - expected[keep]) ** 2 / expected[keep]))
    p = float(stats.chi2.sf(stat, max(int(keep.sum()) - 1, 1)))
    return p, obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run ``chi_square_check`` ``nrepeat`` times and assert that at least
    ``nrepeat * success_rate`` of them have a p-value above ``alpha``.

    Parameters
    ----------
    generator, buckets, probs, nsamples :
        As ``chi_square_check``'s.
    nrepeat : int
        Repetitions.
    success_rate : float
        The fraction of repetitions that must pass.
    alpha : float
        The significance level.

    Returns
    -------
    list of float: the p-values.
    """
    pvalues = [chi_square_check(generator, buckets, probs, nsamples)[0] for _ in range(nrepeat)]
    passed = sum(p > alpha for p in pvalues)
    if passed < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={pvalues}, obs and expected "
                             f"do not match for {nrepeat - passed} of {nrepeat} repetitions")
    return pvalues


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``nsamples`` draws is within 3 standard errors of ``mu``.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns n samples.
    mu, sigma : float
        The distribution's mean and standard deviation.
    nsamples : int
        Samples to draw.
    """
    m = float(np.mean(generator(nsamples)))
    return abs(m - mu) < 3.0 * sigma / np.sqrt(nsamples)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the variance of ``nsamples`` draws is within 3 standard errors
    of ``sigma**2`` (normal-theory standard error).

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns n samples.
    sigma : float
        The distribution's standard deviation.
    nsamples : int
        Samples to draw.
    """
    v = float(np.var(generator(nsamples)))
    return abs(v - sigma ** 2) < 3.0 * np.sqrt(2.0 / nsamples) * sigma ** 2
