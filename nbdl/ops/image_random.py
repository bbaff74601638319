"""MXNet 1.9.1's random ``_image_*`` augmentations (rules only; kernels in
``nbdl.kernels.*.image_random``, the pixel math in
``nbdl.kernels.shared.image``): ``nd.image.X`` / ``sym.image.X`` /
``npx.image.X`` are ``_image_X`` (alias ``_npx__image_X``).

Each takes an HWC image with 1 or 3 channels (as MXNet) or an NHWC batch
(nbdl: one draw per image), keeps its shape and dtype, and passes the head
gradient through (MXNet's ``_copy``).  Draws come from nbdl's kernel
generators on the output's device, so ``mx.random.seed(n)`` (or
``seed(n, ctx)``) reproduces them:

- ``random_flip_left_right`` / ``random_flip_top_bottom``: mirror with
  probability 1/2 (nbdl's attribute ``p``, absent from MXNet's op, sets
  another probability: Gluon 2.0's flip transforms take one);
- ``random_brightness(min_factor, max_factor)``: ``x * a``;
- ``random_contrast(min_factor, max_factor)``: ``x * a + (1 - a) * mean
  luma``;
- ``random_saturation(min_factor, max_factor)``: MXNet's blend
  ``x * a + (1 - a) * 0.114 * blue`` (its gray level keeps only the last
  term of the luma sum; 1 channel: unchanged);
- ``random_hue(min_factor, max_factor)``: rotate the hue by ``a`` turns in
  HLS space (1 channel: unchanged);
- ``random_color_jitter(brightness, contrast, saturation, hue)``: the steps
  with a positive amount, in a random order, with factors ``1 + U(-b, b)``
  (hue ``U(-h, h)``), each stored in the output dtype before the next;
- ``random_lighting(alpha_std=0.05)``: ``adjust_lighting`` with alphas
  drawn from N(0, alpha_std).

``a`` is drawn uniformly from [min_factor, max_factor].
"""
from ..errors import AttrError
from .attrs import Attr
from .image import copy_grad, image_shape, kernels, register_image, temps
from .rules import same_type

ENHANCE_ATTRS = {
    "min_factor": Attr("float", doc="Smallest factor (>= 0)."),
    "max_factor": Attr("float", doc="Largest factor (>= 0)."),
}


def _enhance_inputs(name):
    def rule(attrs):
        lo, hi = attrs["min_factor"], attrs["max_factor"]
        if not 0 <= lo <= hi:
            raise AttrError(f"_image_{name}: min_factor={lo} and max_factor={hi} must satisfy "
                            f"0 <= min_factor <= max_factor")
        return ["data"]
    return rule


def _register(name, attrs, input_names, doc, temp="plain"):
    register_image(name, input_names=input_names, attrs=attrs,
                   infer_shape=image_shape(f"_image_{name}"), infer_type=same_type,
                   gradient=copy_grad, kernels=kernels("image_random", name),
                   temp=temps("image_random", temp), doc=doc)


def _flip_inputs(attrs):
    if not 0 <= attrs["p"] <= 1:
        raise AttrError(f"random flip: p={attrs['p']} must be in [0, 1]")
    return ["data"]


for _name in ("random_flip_left_right", "random_flip_top_bottom"):
    _register(_name, {"p": Attr("float", 0.5, doc="nbdl: the probability of a flip.")},
              _flip_inputs, "Mirror an image with probability p (MXNet: 1/2).")

for _name, _doc in (("random_brightness", "Scale an image by a random factor."),
                    ("random_contrast", "Blend an image with its mean luma by a random factor."),
                    ("random_saturation", "Blend an image with its gray level by a random factor."),
                    ("random_hue", "Rotate an image's hue by a random fraction of a turn.")):
    _register(_name, dict(ENHANCE_ATTRS), _enhance_inputs(_name), _doc,
              temp="means" if _name == "random_contrast" else "plain")


def _jitter_inputs(attrs):
    for k in ("brightness", "contrast", "saturation", "hue"):
        if attrs[k] < 0:
            raise AttrError(f"_image_random_color_jitter: {k}={attrs[k]} must be non-negative")
    return ["data"]


_register("random_color_jitter",
          {k: Attr("float", doc=f"How much to jitter {k}.")
           for k in ("brightness", "contrast", "saturation", "hue")},
          _jitter_inputs, "Random brightness, contrast, saturation and hue in a random order.",
          temp="means")


def _lighting_inputs(attrs):
    if attrs["alpha_std"] < 0:
        raise AttrError(f"_image_random_lighting: alpha_std={attrs['alpha_std']} must be "
                        f"non-negative")
    return ["data"]


_register("random_lighting", {"alpha_std": Attr("float", 0.05, doc="Level of the noise.")},
          _lighting_inputs, "AlexNet's PCA lighting noise with random alphas.")
