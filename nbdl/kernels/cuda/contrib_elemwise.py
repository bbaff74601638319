"""CUDA kernel of ``_contrib_div_sqrt_dim``: the generated elementwise map
(``x / scale``) with ``scale = sqrt(data.shape[-1])`` worked out here.
``_contrib_quadratic`` and its gradient run ``prepare_map`` directly."""
import dataclasses

from ..shared.elemwise_exprs import div_sqrt_dim_attrs
from ._elemwise_gen import prepare_map


def prepare_div_sqrt_dim(call):
    """The map kernel with the attribute ``scale`` set from the input's last axis."""
    return prepare_map(dataclasses.replace(call, attrs=div_sqrt_dim_attrs(call)))
