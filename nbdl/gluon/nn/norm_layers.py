"""Normalization layers (Gluon 2.0): BatchNorm, SyncBatchNorm, InstanceNorm,
LayerNorm and GroupNorm.

BatchNorm's running statistics are Parameters with ``grad_req='null'``.
In a traced graph they are the ``BatchNorm`` op's aux inputs
(``moving_mean``, ``moving_var``), so an exported graph lists them as aux
states (``aux:`` keys in the params file); eagerly they are passed to the op
as its aux inputs, which it updates in place while training."""
from ...errors import NbdlError
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter


def _channel_param(name, in_channels, init, trainable, dtype="float32"):
    return Parameter(name, grad_req="write" if trainable else "null", shape=(in_channels,),
                     init=init, dtype=dtype, allow_deferred_init=True,
                     differentiable=trainable)


def _kwargs_repr(kwargs):
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


class _NormBase(HybridBlock):
    def _axis_norm(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                   in_channels, dtype):
        """The attributes of a norm over ``axis`` with ``epsilon`` and gamma/beta
        (InstanceNorm, LayerNorm)."""
        self._axis = int(axis)
        self._kwargs = {"eps": float(epsilon), "axis": self._axis, "center": center, "scale": scale}
        self._gamma_beta(in_channels, gamma_initializer, beta_initializer, scale, center, dtype)

    def _gamma_beta(self, in_channels, gamma_initializer, beta_initializer, scale, center,
                    dtype):
        """The per-channel ``gamma`` (trained when ``scale``) and ``beta`` (when ``center``)."""
        self.gamma = _channel_param("gamma", int(in_channels), gamma_initializer, scale, dtype)
        self.beta = _channel_param("beta", int(in_channels), beta_initializer, center, dtype)

    def __repr__(self):
        in_channels = self.gamma.shape[0] if self.gamma.shape else 0
        return (f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={in_channels if in_channels else None})")


class BatchNorm(_NormBase):
    """Normalizes over every axis but ``axis`` with the batch's statistics
    while training (updating ``running_mean``/``running_var`` with
    ``momentum``) and with the running statistics otherwise (or always, with
    ``use_global_stats``).  ``scale=False`` fixes gamma at 1
    (``fix_gamma``); ``center=False`` leaves beta at its initial 0."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, dtype="float32", **kwargs):
        super().__init__(**kwargs)
        if not 0 <= momentum <= 1:
            raise NbdlError(f"{type(self).__name__}: momentum must be in [0, 1], got {momentum}")
        if epsilon <= 0:
            raise NbdlError(f"{type(self).__name__}: epsilon must be positive, got {epsilon}")
        self._axis = int(axis)
        self._kwargs = {"axis": int(axis), "eps": float(epsilon), "momentum": float(momentum),
                        "fix_gamma": not scale, "use_global_stats": bool(use_global_stats)}
        in_channels = int(in_channels)
        if in_channels:
            self.in_channels = in_channels
        self._gamma_beta(in_channels, gamma_initializer, beta_initializer, scale, center, dtype)
        self.running_mean = _channel_param("running_mean", in_channels, running_mean_initializer,
                                           False, dtype)
        self.running_var = _channel_param("running_var", in_channels,
                                          running_variance_initializer, False, dtype)

    def forward(self, x):
        return call_op("BatchNorm", [x, self.gamma.data(), self.beta.data(),
                                     self.running_mean.data(), self.running_var.data()],
                       name=self._fwd_name(), **self._kwargs)


class SyncBatchNorm(BatchNorm):
    """BatchNorm over axis 1 whose batch statistics cover every rank of a
    distributed job (``_contrib_SyncBatchNorm``: per-channel sums reduced
    over the ranks in forward and backward); in a single process it is
    exactly BatchNorm.  ``num_devices`` (MXNet's devices per process) is
    recorded as the op's ``ndev``: nbdl runs one device per rank.

    Parameters
    ----------
    in_channels : int, default 0
        Channels (0: inferred from the first input).
    num_devices : int, optional
        MXNet's devices per process (recorded).
    momentum : float, default 0.9
        Momentum of the running statistics.
    epsilon : float, default 1e-5
        Added to the variance.
    center : bool, default True
        Learn beta.
    scale : bool, default True
        Learn gamma.
    use_global_stats : bool, default False
        Normalise with the running statistics also in training.
    beta_initializer, gamma_initializer, running_mean_initializer, running_variance_initializer
        Initializers of the four parameters.
    dtype : str, default 'float32'
        The parameters' dtype.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5, center=True,
                 scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", dtype="float32", **kwargs):
        if num_devices is not None and int(num_devices) < 1:
            raise NbdlError(f"SyncBatchNorm: num_devices must be at least 1, got {num_devices}")
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, dtype, **kwargs)
        self._num_devices = num_devices
        self._sync = {"eps": self._kwargs["eps"], "momentum": self._kwargs["momentum"],
                      "fix_gamma": self._kwargs["fix_gamma"],
                      "use_global_stats": self._kwargs["use_global_stats"],
                      "ndev": int(num_devices or 1)}

    def forward(self, x):
        return call_op("_contrib_SyncBatchNorm",
                       [x, self.gamma.data(), self.beta.data(), self.running_mean.data(),
                        self.running_var.data()], key=self.name or "syncbatchnorm",
                       **self._sync)


class InstanceNorm(_NormBase):
    """Normalizes each sample and channel over the remaining (spatial) axes,
    then applies per-channel gamma and beta (``axis`` is the channel axis)."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(**kwargs)
        self._axis_norm(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                        in_channels, dtype)

    def forward(self, x):
        gamma, beta = self.gamma.data(), self.beta.data()
        eps = self._kwargs["eps"]
        if self._axis == 1:
            return call_op("InstanceNorm", [x, gamma, beta], eps=eps)
        x = call_op("SwapAxis", [x], dim1=1, dim2=self._axis)
        x = call_op("InstanceNorm", [x, gamma, beta], eps=eps)
        return call_op("SwapAxis", [x], dim1=1, dim2=self._axis)


class LayerNorm(_NormBase):
    """Normalizes over ``axis`` (the last by default), then applies gamma and
    beta of that axis' size."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(**kwargs)
        self._axis_norm(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                        in_channels, dtype)

    def forward(self, x):
        return call_op("LayerNorm", [x, self.gamma.data(), self.beta.data()],
                       axis=self._axis, eps=self._kwargs["eps"])


class GroupNorm(_NormBase):
    """Splits the channels (axis 1) into ``num_groups`` groups and normalizes
    each sample's group over its channels and spatial axes, then applies
    per-channel gamma and beta."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(**kwargs)
        if int(num_groups) < 1:
            raise NbdlError(f"GroupNorm: num_groups must be positive, got {num_groups}")
        if in_channels and int(in_channels) % int(num_groups):
            raise NbdlError(f"GroupNorm: num_groups={num_groups} must divide in_channels="
                            f"{in_channels}")
        self._kwargs = {"eps": float(epsilon), "num_groups": int(num_groups), "center": center,
                        "scale": scale}
        self._gamma_beta(in_channels, gamma_initializer, beta_initializer, scale, center, dtype)

    def forward(self, x):
        return call_op("GroupNorm", [x, self.gamma.data(), self.beta.data()],
                       num_groups=self._kwargs["num_groups"], eps=self._kwargs["eps"])
