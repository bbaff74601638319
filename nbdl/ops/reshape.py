"""Reshape (MXNet 1.x's special codes 0, -1, -2, -3, -4 and the legacy
``target_shape``) and _npx_reshape (MXNet 2's npx.reshape codes): rules only,
the kernel is the flat copy of ``nbdl.kernels.*.shape`` (element order is
kept, so it may run in place)."""
from .partial_shape import UNKNOWN, accepts_partial, fill_one_unknown, is_full, merge
from .registry import Attr, OpDef, register, shape_error
from .rules import same_type, size_of
from .shape import MOVE_DTYPES, kernels, reshape_like_grad


# -- Reshape -------------------------------------------------------------------

def _apply_reshape_codes(codes, dshape, reverse, where):
    """MXNet's special codes: 0 copy a dim, -1 infer one dim, -2 copy the rest,
    -3 merge two dims, -4 split one dim into the two that follow (one may be
    -1).  ``reverse`` applies them right to left (codes and dims reversed, as
    MXNet does, so a -4 then follows its two dims)."""
    def bad(msg):
        return shape_error(where, f"cannot reshape input of shape {tuple(dshape)} with "
                                  f"shape={tuple(codes)}, reverse={reverse}: {msg}")
    dims = list(reversed(dshape)) if reverse else list(dshape)
    spec = list(reversed(codes)) if reverse else list(codes)
    out, src, infer_at, i = [], 0, -1, 0
    while i < len(spec):
        c = spec[i]
        if c is None:
            raise bad("None is not a valid dim")
        if c == 0:
            if src >= len(dims):
                raise bad(f"code 0 at position {i} has no input dim left to copy")
            out.append(dims[src])
            src += 1
        elif c == -1:
            if infer_at >= 0:
                raise bad("only one dim can be inferred (-1)")
            # The output position, not the code position (MXNet mixes the two
            # when -2/-3/-4 come before -1 and then fails the size check).
            infer_at = len(out)
            out.append(1)
            src += 1
        elif c == -2:
            out.extend(dims[src:])
            src = len(dims)
        elif c == -3:
            if src + 1 >= len(dims):
                raise bad(f"code -3 at position {i} needs two input dims")
            a, b = dims[src], dims[src + 1]
            out.append(UNKNOWN if a < 0 or b < 0 else a * b)
            src += 2
        elif c == -4:
            if i + 2 >= len(spec):
                raise bad(f"code -4 at position {i} must be followed by two dims")
            if src >= len(dims):
                raise bad(f"code -4 at position {i} has no input dim left to split")
            d0 = dims[src]
            src += 1
            d1, d2 = spec[i + 1], spec[i + 2]
            i += 2
            if d1 is None or d2 is None or d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0:
                raise bad(f"split dims after -4 must be positive or -1, got {d1}, {d2}")
            if d1 == -1 and d2 == -1:
                raise bad("split dims after -4 cannot both be -1")
            if d1 == -1 and d0 >= 0:
                d1 = d0 // d2
            if d2 == -1 and d0 >= 0:
                d2 = d0 // d1
            if d0 >= 0 and d1 * d2 != d0:
                raise bad(f"split dims {d1}, {d2} do not multiply to input dim {d0}")
            out.extend([d1, d2])
        elif c > 0:
            out.append(c)
            src += 1
        else:
            raise bad(f"unknown code {c}")
        i += 1
    full = is_full(dshape)
    if infer_at >= 0:
        # unknown while an input dim is (MXNet's InferReshapeShape)
        known = size_of(out)
        if full and known == 0:
            raise bad("-1 cannot be inferred next to a zero-size dim")
        out[infer_at] = size_of(dshape) // known if full else UNKNOWN
    if reverse:
        out.reverse()
    out = tuple(out)
    if full and size_of(out) != size_of(dshape):
        raise bad(f"the result {out} has {size_of(out)} elements, the input has {size_of(dshape)}")
    return out


def _legacy_target(attrs, dshape, where):
    """The deprecated ``target_shape`` (0 = infer) with ``keep_highest``."""
    target = list(attrs["target_shape"])
    start = 1 if attrs["keep_highest"] else 0
    if attrs["keep_highest"]:
        if not target or not dshape:
            raise shape_error(where, "keep_highest needs a target_shape and an input with dims")
        target[0] = dshape[0]
    zeros = [i for i in range(start, len(target)) if target[i] == 0]
    if len(zeros) > 1:
        raise shape_error(where, f"target_shape={attrs['target_shape']} may infer one dim (0), not "
                                 f"{len(zeros)}", [dshape])
    if zeros:
        target[zeros[0]] = 1
        known = size_of(target)
        target[zeros[0]] = size_of(dshape) // known if known else 0
    out = tuple(target)
    if size_of(out) != size_of(dshape):
        raise shape_error(where, f"cannot reshape input of shape {tuple(dshape)} to "
                                 f"target_shape={attrs['target_shape']} "
                                 f"(keep_highest={attrs['keep_highest']})")
    return out


def reshape_output_shape(attrs, dshape, where="Reshape"):
    shape, target = attrs["shape"], attrs["target_shape"]
    if shape and target:
        raise shape_error(where, f"give shape={shape} or the legacy target_shape={target}, not both")
    if attrs["keep_highest"] and not target:
        raise shape_error(where, "keep_highest applies only to the legacy target_shape")
    if target:
        return _legacy_target(attrs, tuple(dshape), where)
    if not shape:
        raise shape_error(where, "the target shape is missing (attribute shape)")
    return _apply_reshape_codes(shape, tuple(dshape), attrs["reverse"], where)


@accepts_partial
def _reshape_shape(attrs, in_shapes, out_shapes):
    # partial shapes as MXNet's ReshapeShape: the codes copy unknown dims, a
    # -1 next to one stays unknown; a known output then gives the input's
    # single unknown dim (ReverseReshapeInferShape)
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if is_full(d):
        out = reshape_output_shape(attrs, d)
        return in_shapes, [merge(out, out_shapes[0], "Reshape", "the output")]
    out = out_shapes[0]
    if not attrs["target_shape"]:
        out = merge(reshape_output_shape(attrs, d), out, "Reshape", "the output")
    if is_full(out):
        d = fill_one_unknown(d, size_of(out))
    return [d], [out]


register(OpDef(
    name="Reshape",
    attrs={"shape": Attr("tuple", ()), "reverse": Attr("bool", False),
           "target_shape": Attr("tuple", ()), "keep_highest": Attr("bool", False)},
    infer_shape=_reshape_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="Reshape with MXNet's special codes 0, -1, -2, -3, -4 and ``reverse``."),
    aliases=("reshape",))


# -- _npx_reshape (MXNet 2's npx.reshape) ------------------------------------------------

def npx_reshape_output_shape(newshape, dshape, reverse, where="_npx_reshape"):
    """MXNet 2's ``npx.reshape`` codes: a size >= 0 is a new dim (0 is a
    zero-length dim, not "copy"), -1 infers one dim, -2 copies one input dim,
    -3 drops an input dim of size 1, -4 copies all remaining input dims, -5
    merges two input dims, -6 splits one input dim into the two values that
    follow it (one may be -1).  A new dim and -1 also step over one input dim.
    ``reverse`` reverses the input dims and the codes, applies them, and
    reverses the result, so a reversed -6 is written after its two values."""
    dshape = tuple(dshape)

    def bad(msg):
        return shape_error(where, f"cannot reshape input of shape {dshape} into "
                                  f"newshape={tuple(newshape)} (reverse={reverse}): {msg}")
    dims = list(reversed(dshape)) if reverse else list(dshape)
    spec = list(reversed(newshape)) if reverse else list(newshape)
    out, src, infer_at, i = [], 0, -1, 0

    def claim_infer(pos):
        nonlocal infer_at
        if infer_at >= 0:
            raise bad("only one dim can be inferred (-1)")
        infer_at = pos

    while i < len(spec):
        c = spec[i]
        if c is None:
            raise bad("None is not a valid dim")
        if c >= 0:
            out.append(c)
            src += 1
        elif c == -1:
            claim_infer(len(out))
            out.append(1)
            src += 1
        elif c == -2:
            if src >= len(dims):
                raise bad(f"code -2 at position {i} has no input dim left to copy")
            out.append(dims[src])
            src += 1
        elif c == -3:
            if src >= len(dims):
                raise bad(f"code -3 at position {i} has no input dim left to skip")
            if dims[src] != 1:
                raise bad(f"code -3 at position {i} skips only a dim of size 1, "
                          f"the input dim is {dims[src]}")
            src += 1
        elif c == -4:
            out.extend(dims[src:])
            src = len(dims)
        elif c == -5:
            if src + 1 >= len(dims):
                raise bad(f"code -5 at position {i} needs two input dims to merge")
            a, b = dims[src], dims[src + 1]
            out.append(UNKNOWN if a < 0 or b < 0 else a * b)
            src += 2
        elif c == -6:
            if i + 2 >= len(spec):
                raise bad(f"code -6 at position {i} must be followed by two dims")
            if src >= len(dims):
                raise bad(f"code -6 at position {i} has no input dim left to split")
            d0 = dims[src]
            src += 1
            d1, d2 = spec[i + 1], spec[i + 2]
            i += 2
            if d1 is None or d2 is None or d1 < -1 or d2 < -1:
                raise bad(f"split dims after -6 must be sizes >= 0 or -1, got {d1}, {d2}")
            if d1 == -1 and d2 == -1:
                raise bad("split dims after -6 cannot both be -1")
            if d1 == -1 or d2 == -1:
                known = d2 if d1 == -1 else d1
                if known == 0:
                    raise bad(f"split dims {d1}, {d2}: -1 cannot be inferred next to a 0")
                if d1 == -1:
                    d1 = d0 // known
                else:
                    d2 = d0 // known
            if d1 * d2 != d0:
                raise bad(f"split dims {d1}, {d2} do not multiply to input dim {d0}")
            out.extend([d1, d2])
        else:
            raise bad(f"unknown code {c} (codes are -1 to -6)")
        i += 1
    total = size_of(dshape)
    if infer_at >= 0:
        known = size_of(out)
        if known == 0:
            raise bad("-1 cannot be inferred next to a zero-size dim")
        if total % known:
            raise bad(f"-1 cannot be inferred: {total} elements do not divide by {known}")
        out[infer_at] = total // known
    if reverse:
        out.reverse()
    out = tuple(out)
    if size_of(out) != total:
        raise bad(f"the result {out} has {size_of(out)} elements, the input has {total}")
    return out


def _npx_reshape_shape(attrs, in_shapes, out_shapes):
    if in_shapes[0] is None:
        return in_shapes, out_shapes
    return in_shapes, [npx_reshape_output_shape(attrs["newshape"], in_shapes[0],
                                                attrs["reverse"])]


register(OpDef(
    name="_npx_reshape",
    input_names=("a",),
    attrs={"newshape": Attr("tuple"), "reverse": Attr("bool", False),
           "order": Attr("str", "C", choices=("C",))},
    infer_shape=_npx_reshape_shape, infer_type=same_type,
    gradient=reshape_like_grad,
    inplace=lambda attrs: [(0, 0)],
    half_mirrors=True,
    kernels=kernels("prepare_copy"), supports_add=True, dtypes=MOVE_DTYPES,
    doc="MXNet 2's npx.reshape: codes -1 (infer), -2 (copy a dim), -3 (drop a size-1 dim), "
        "-4 (copy the rest), -5 (merge two dims), -6 (split a dim into the two values "
        "that follow); sizes >= 0 are new dims; ``reverse`` works right to left."),
    aliases=("_npi_reshape",))
