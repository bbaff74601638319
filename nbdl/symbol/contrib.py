"""``nbdl.sym.contrib``: MXNet's ``mx.sym.contrib`` spellings; ``contrib.X``
builds a node of the op ``_contrib_X`` (``sym.contrib.index_copy`` is
``sym._contrib_index_copy``), except ``rand_zipfian``, which MXNet writes
with other ops."""
import math

from ..ops.registry import op_namespace
from .construct import create
from .prefixed import package_function

PREFIX = "_contrib_"


def zipfian_from(rand, true_classes, num_sampled, range_max):
    """MXNet's ``rand_zipfian`` arithmetic on ``rand``, ``num_sampled`` float64
    draws uniform in ``[0, log(range_max + 1))`` (NDArrays or Symbols alike):
    the int64 classes and the float64 expected counts of ``true_classes``
    and of the classes.

    Parameters
    ----------
    rand : NDArray or Symbol
        The uniform draws.
    true_classes : NDArray or Symbol
        The target classes.
    num_sampled : int
        How many classes were drawn.
    range_max : int
        The number of classes.
    """
    log_range = math.log(range_max + 1)
    sampled = (rand.exp() - 1).astype("int64") % range_max
    true_cls = true_classes.astype("float64")
    expected_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype("float64")
    expected_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, expected_true, expected_sampled


def rand_zipfian(true_classes, num_sampled, range_max):
    """Symbols of ``num_sampled`` classes drawn from the approximately
    log-uniform distribution over ``[0, range_max)`` and the expected counts
    of ``true_classes`` and of the samples (MXNet's ``sym.contrib.rand_zipfian``).

    Parameters
    ----------
    true_classes : Symbol
        The target classes (1-d).
    num_sampled : int
        How many classes to draw.
    range_max : int
        The number of classes.

    Returns
    -------
    (Symbol, Symbol, Symbol)
        The int64 samples, the float64 expected counts of ``true_classes``
        and of the samples.
    """
    rand = create("_random_uniform", low=0.0, high=math.log(range_max + 1), shape=(num_sampled,),
                  dtype="float64")
    return zipfian_from(rand, true_classes, num_sampled, range_max)


__getattr__, __dir__ = op_namespace(PREFIX, "nbdl.sym.contrib", package_function, globals())
