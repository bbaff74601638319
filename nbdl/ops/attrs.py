"""Typed operator attributes.

MXNet stores every attribute as a string (``"(3, 3)"``, ``"True"``,
``"None"``); an op declares a schema of ``Attr`` fields and the strings are
parsed once, when a node is made.  The original string form is kept as well,
for ``-symbol.json`` and ``debug_str``.
"""
import ast

import numpy as np

from ..errors import AttrError

_MISSING = object()


def _parse_bool(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    s = str(v).strip().lower()
    if s in ("true", "1"):
        return True
    if s in ("false", "0"):
        return False
    raise ValueError(f"not a boolean: {v!r}")


def _parse_int(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != int(v):
            raise ValueError(f"not an integer: {v!r}")
        return int(v)
    s = str(v).strip()
    try:
        return int(s)
    except ValueError:
        f = float(s)
        if f != int(f):
            raise ValueError(f"not an integer: {v!r}") from None
        return int(f)


def _parse_float(v):
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    low = s.lower()
    if low in ("inf", "+inf", "infinity"):
        return float("inf")
    if low in ("-inf", "-infinity"):
        return float("-inf")
    if low == "nan":
        return float("nan")
    return float(s)


def _numpy_to_python(v):
    """A numpy array or scalar as a list or Python number (MXNet 1.x accepts
    ``shape=np.array([2, 3])``), a numpy dtype or scalar type as its name
    (``Cast(dtype=np.float16)``); anything else unchanged."""
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v).name
    if type(v).__module__ == "numpy" and hasattr(v, "tolist"):
        return v.tolist()
    return v


def _parse_tuple(v):
    """``(2, 3)``, ``[2,3]``, ``2``, ``()`` or a 1-d numpy array -> tuple of
    ints (None kept)."""
    v = _numpy_to_python(v)
    if isinstance(v, (tuple, list)):
        items = v
    elif isinstance(v, int) and not isinstance(v, bool):
        items = (v,)
    else:
        s = str(v).strip()
        if s in ("", "()", "[]"):
            return ()
        s = s.replace("None", "None")
        try:
            val = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            raise ValueError(f"not a tuple: {v!r}") from None
        items = val if isinstance(val, (tuple, list)) else (val,)
    out = []
    for x in items:
        out.append(None if x is None or (isinstance(x, str) and x == "None") else _parse_int(x))
    return tuple(out)


def _parse_floats(v):
    """``(0.1, 0.2)``, ``[0.1]``, ``0.1`` or ``()`` -> tuple of floats."""
    if isinstance(v, (tuple, list)):
        items = v
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        items = (v,)
    else:
        s = str(v).strip()
        if s in ("", "()", "[]"):
            return ()
        try:
            val = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            raise ValueError(f"not a tuple of numbers: {v!r}") from None
        items = val if isinstance(val, (tuple, list)) else (val,)
    return tuple(_parse_float(x) for x in items)


def _parse_str(v):
    return str(_numpy_to_python(v))


_PARSERS = {"bool": _parse_bool, "int": _parse_int, "float": _parse_float,
            "tuple": _parse_tuple, "shape": _parse_tuple, "floats": _parse_floats,
            "str": _parse_str}


class Attr:
    """One attribute of an op's schema.

    ``kind`` is ``int``, ``float``, ``bool``, ``str``, ``tuple`` (of ints),
    ``floats`` (a tuple of floats: ``multi_sgd_update``'s ``lrs``);
    ``optional=True`` also accepts ``None``/``"None"``; ``choices`` limits a
    ``str`` attribute."""

    __slots__ = ("kind", "default", "optional", "choices", "doc")

    def __init__(self, kind, default=_MISSING, optional=False, choices=None, doc=""):
        if kind not in _PARSERS:
            raise ValueError(f"unknown attribute kind {kind!r}")
        self.kind = kind
        self.default = default
        self.optional = optional
        self.choices = tuple(choices) if choices else None
        self.doc = doc

    @property
    def required(self):
        return self.default is _MISSING

    def parse(self, value):
        if self.optional and (value is None or (isinstance(value, str) and value.strip() == "None")):
            return None
        v = _PARSERS[self.kind](value)
        if self.choices is not None and v not in self.choices:
            raise ValueError(f"{v!r} is not one of {', '.join(map(repr, self.choices))}")
        return v


def attr_to_str(v):
    """MXNet's string form of a Python attribute value."""
    if isinstance(v, str):
        return v
    v = _numpy_to_python(v)
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, list):
        v = tuple(v)
    return str(v)


# Keys MXNet keeps on nodes that are not op parameters (lr_mult, ctx_group, ...).
def is_user_attr(key):
    return key.startswith("__") and key.endswith("__")


def parse_attrs(opname, schema, raw, node_name=None, extra=False):
    """Parse ``raw`` (a dict of str or Python values) against ``schema``.

    Returns ``(parsed, strings)``; raises ``AttrError`` naming the op, node and
    attribute for unknown keys, missing required ones and malformed values.
    An op without attributes ignores the keys it is given, as MXNet 1.x's
    parameterless ops do (``broadcast_maximum(a, b, axis=1)``).  With
    ``extra=True`` keys outside the schema are kept as strings (``Custom``
    hands them to its ``CustomOpProp``)."""
    where = f"{opname}" + (f" (node {node_name!r})" if node_name else "")
    parsed, strings = {}, {}
    for key, value in raw.items():
        if is_user_attr(key) or not (schema or extra):
            continue
        if extra and key not in schema:
            parsed[key] = strings[key] = attr_to_str(value)
            continue
        if key not in schema:
            known = ", ".join(sorted(schema)) or "none"
            raise AttrError(f"{where}: unknown attribute {key!r} (known attributes: {known})")
        try:
            parsed[key] = schema[key].parse(value)
        except (ValueError, TypeError, SyntaxError, OverflowError, RecursionError, MemoryError) as e:
            raise AttrError(f"{where}: attribute {key}={value!r} is invalid: "
                            f"{e or type(e).__name__}") from None
        strings[key] = attr_to_str(value)
    for key, spec in schema.items():
        if key not in parsed:
            if spec.required:
                raise AttrError(f"{where}: required attribute {key!r} is missing")
            parsed[key] = spec.default
    return parsed, strings
