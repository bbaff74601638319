"""MXNet 1.x ``-symbol.json`` files: writing, and validated reading.

Schema (what MXNet 1.x writes and reads)::

    {"nodes": [{"op": "null" | opname, "name": str,
                "attrs": {str: str},              # omitted when empty
                "inputs": [[node_id, out_index, version], ...]}, ...],
     "arg_nodes": [ids of variable nodes],
     "node_row_ptr": [0, cumulative output counts (hidden outputs included)],
     "heads": [[node_id, out_index, version], ...],
     "attrs": {"mxnet_version": ["int", 10901]}}

Reading also accepts MXNet 0.x files: op parameters under ``"param"`` and
node attributes under ``"attr"`` (with ``lr_mult``/``ctx_group``... spelled
without underscores, and ``weight_lr_mult`` on an op meaning ``__lr_mult__``
of its weight variable), ``[node_id, out_index]`` pairs, no ``"attrs"``,
``"arg_nodes"`` or ``"node_row_ptr"``, and (before 0.9.0) no aux-state inputs,
which are added as variables, as MXNet's own upgrade does.

A file is data, never code: it is parsed with ``json.loads`` only, every
field is type-checked, node references must point to earlier nodes (so no
cycles), sizes are capped before anything is allocated from them, and every
problem is an ``NbdlError`` naming the node.
"""
import json
import os

from .. import util as _util
from ..dtype import from_flag
from ..errors import AttrError, GraphError, NbdlError, UnknownOpError
from ..ops.ir import Entry, make_node, make_variable, topo_order
from ..ops.attrs import _parse_tuple, attr_to_str, is_user_attr
from ..ops.registry import get_op
from ..serialization.atomic import atomic_write
from .base import HIDDEN_KEYS, SymbolBase, user_attr_key

MXNET_VERSION = 10901          # written as MXNet 1.9.1
MAX_DOCUMENT_CHARS = 1 << 30   # a -symbol.json over 1 GiB is not a graph
MAX_OUTPUTS_PER_NODE = 1 << 16  # SliceChannel(num_outputs=10**9) is rejected, not allocated

_SCALARS = (str, int, float, bool)


# -- writing ---------------------------------------------------------------------

def graph_document(sym):
    """The -symbol.json document of ``sym`` as Python dicts and lists."""
    heads = sym._outputs
    order = topo_order(heads)
    ids = {id(n): i for i, n in enumerate(order)}
    nodes, arg_nodes, row_ptr = [], [], [0]
    for i, node in enumerate(order):
        attrs = {k: attr_to_str(v) for k, v in node.user_attrs.items()}
        attrs.update(node.attr_str)
        doc = {"op": node.op.name if node.op is not None else "null", "name": node.name}
        if attrs:
            doc["attrs"] = {k: attrs[k] for k in sorted(attrs)}
        doc["inputs"] = [[ids[id(e.node)], e.index, 0] for e in node.inputs]
        nodes.append(doc)
        if node.op is None:
            arg_nodes.append(i)
        row_ptr.append(row_ptr[-1] + node.num_outputs)
    return {"nodes": nodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr,
            "heads": [[ids[id(e.node)], e.index, 0] for e in heads],
            "attrs": _graph_attrs()}


def _graph_attrs():
    """The graph's ``attrs``: the version, and ``is_np_shape`` under
    NumPy-shape semantics (``nbdl.util``) as MXNet writes it."""
    attrs = {"mxnet_version": ["int", MXNET_VERSION]}
    if _util.is_np_shape():
        attrs["is_np_shape"] = ["int", 1]
    return attrs


def _format(doc):
    """MXNet's layout: one field per line, index lists on one line."""
    q = json.dumps
    out = ["{", '  "nodes": [']
    for k, node in enumerate(doc["nodes"]):
        fields = [f'      "op": {q(node["op"])}', f'      "name": {q(node["name"])}']
        attrs = node.get("attrs")
        if attrs:
            if len(attrs) == 1:
                fields.append(f'      "attrs": {q(attrs)}')
            else:
                body = ",\n".join(f"        {q(a)}: {q(v)}" for a, v in attrs.items())
                fields.append('      "attrs": {\n' + body + "\n      }")
        fields.append(f'      "inputs": {q(node["inputs"])}')
        out.append("    {")
        out.append(",\n".join(fields))
        out.append("    }," if k + 1 < len(doc["nodes"]) else "    }")
    out.append("  ],")
    out.append(f'  "arg_nodes": {q(doc["arg_nodes"])},')
    out.append(f'  "node_row_ptr": {q(doc["node_row_ptr"])},')
    out.append(f'  "heads": {q(doc["heads"])},')
    out.append(f'  "attrs": {q(doc["attrs"])}')
    out.append("}")
    return "\n".join(out)


def to_json(sym):
    """The -symbol.json text of ``sym`` (a Symbol), in MXNet's layout.

    Parameters
    ----------
    sym : Symbol
        The graph's outputs.
    """
    if not isinstance(sym, SymbolBase):
        raise GraphError(f"to_json expects a Symbol, got {type(sym).__name__}")
    return _format(graph_document(sym))


def save(sym, fname):
    """Write ``to_json(sym)`` to ``fname`` (aside, then renamed into place).

    Parameters
    ----------
    sym : Symbol
        The graph's outputs.
    fname : str or path
        The file.
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise GraphError(f"save: fname must be a path, got {type(fname).__name__}")
    text = to_json(sym).encode("utf-8")
    atomic_write(os.fspath(fname), lambda f: f.write(text))


# -- reading ---------------------------------------------------------------------

def read_file(fname):
    """The output entries of a -symbol.json file (MXNet 0.x or 1.x)
    (``sym.load`` makes them a Symbol).

    Parameters
    ----------
    fname : str or path
        The file.
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise GraphError(f"load: fname must be a path, got {type(fname).__name__}")
    try:
        size = os.path.getsize(fname)
    except OSError as e:
        raise GraphError(f"cannot read symbol file {os.fspath(fname)!r}: {e.strerror}") from None
    if size > MAX_DOCUMENT_CHARS:
        raise GraphError(f"{os.fspath(fname)!r}: {size} bytes is too large for a symbol file "
                         f"(limit {MAX_DOCUMENT_CHARS})")
    with open(fname, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphError(f"{os.fspath(fname)!r} is not UTF-8 text: {e}") from None
    return read_json(text)


def read_json(json_str):
    """Parse and validate a -symbol.json document; returns its output
    entries (``sym.load_json`` makes them a Symbol).

    Parameters
    ----------
    json_str : str or bytes
        The document.
    """
    if isinstance(json_str, (bytes, bytearray)):
        try:
            json_str = bytes(json_str).decode("utf-8")
        except UnicodeDecodeError as e:
            raise GraphError(f"symbol JSON is not UTF-8 text: {e}") from None
    if not isinstance(json_str, str):
        raise GraphError(f"load_json expects a JSON string, got {type(json_str).__name__}")
    if len(json_str) > MAX_DOCUMENT_CHARS:
        raise GraphError(f"symbol JSON of {len(json_str)} characters is too large "
                         f"(limit {MAX_DOCUMENT_CHARS})")
    try:
        doc = json.loads(json_str)
    except RecursionError:
        raise GraphError("symbol JSON is nested too deeply") from None
    except ValueError as e:
        raise GraphError(f"symbol JSON is not valid JSON: {e}") from None
    return _Reader(doc).heads()


def _is_int(v):
    return type(v) is int  # noqa: E721  (bool is not an index)


def _tname(v):
    return "null" if v is None else type(v).__name__


class _Reader:
    def __init__(self, doc):
        if not isinstance(doc, dict):
            raise GraphError(f"symbol JSON: the document must be an object, got {_tname(doc)}")
        self.doc = doc
        self.nodes = []
        self.version = _version(doc)
        # a legacy graph (no is_np_shape attribute) read in NumPy-shape mode:
        # its variables' 0 dims are unknown, written -1 (MXNet's
        # ConvertShapeAttrToNumPyCompatible)
        flag = doc.get("attrs", {}).get("is_np_shape") if isinstance(doc.get("attrs"), dict) \
            else None
        self.unknown_zero = _util.is_np_shape() and not (
            isinstance(flag, list) and len(flag) == 2 and str(flag[1]) not in ("0", ""))

    def heads(self):
        doc = self.doc
        nodes = doc.get("nodes")
        if not isinstance(nodes, list):
            raise GraphError(f"symbol JSON: 'nodes' must be a list, got {_tname(nodes)}")
        if not nodes:
            raise GraphError("symbol JSON: 'nodes' is empty")
        for i, raw in enumerate(nodes):
            self.nodes.append(self._node(i, raw))
        heads = self._entries(doc.get("heads"), "symbol JSON: 'heads'", len(self.nodes))
        if not heads:
            raise GraphError("symbol JSON: 'heads' is empty (the graph has no outputs)")
        self._check_index_lists()
        return heads

    # -- one node ---------------------------------------------------------
    def _node(self, i, raw):
        if not isinstance(raw, dict):
            raise GraphError(f"symbol JSON: node {i} must be an object, got {_tname(raw)}")
        name = raw.get("name")
        if not isinstance(name, str):
            raise GraphError(f"symbol JSON: node {i}: 'name' must be a string, got {_tname(name)}")
        where = f"symbol JSON: node {i} ({_short(name)})"
        op_name = raw.get("op")
        if not isinstance(op_name, str):
            raise GraphError(f"{where}: 'op' must be a string, got {_tname(op_name)}")
        attrs = self._attrs(raw, where)
        inputs = self._entries(raw.get("inputs", []), f"{where}: 'inputs'", i)
        for key in ("control_deps", "subgraphs"):
            if key in raw and not isinstance(raw[key], list):
                raise GraphError(f"{where}: {key!r} must be a list, got {_tname(raw[key])}")
        if raw.get("subgraphs"):
            raise GraphError(f"{where}: subgraphs (control-flow ops) are not supported")
        if op_name == "null":
            if inputs:
                raise GraphError(f"{where}: a variable (op 'null') cannot have inputs")
            _check_variable_attrs(attrs, where)
            if self.unknown_zero and "__shape__" in attrs:
                shape = _parse_tuple(attrs["__shape__"])
                attrs = dict(attrs, __shape__=attr_to_str(tuple(-1 if d == 0 else d
                                                                  for d in shape)))
            return make_variable(name, attrs)
        try:
            op = get_op(op_name)
        except UnknownOpError:
            raise UnknownOpError(f"{where}: unknown operator {_short(op_name)}: "
                                 f"nbdl has no op of that name") from None
        user = {k: v for k, v in attrs.items() if is_user_attr(k)}
        params = {k: v for k, v in attrs.items() if not is_user_attr(k)}
        arg_keys = _pop_input_hidden_keys(params, op.attrs)
        if (self.version < 905 and op.name in ("argmax", "argmin")
                and params.get("axis") == "-1"):
            del params["axis"]   # before 0.9.5, axis=-1 meant "no axis"
        try:
            self._check_var_args(op, params, inputs)
            if self.version < 900 and op.aux_names and not op.key_var_num_args:
                inputs = _add_missing_aux(op, params, inputs, name, dict(user, **params))
            node = make_node(op, inputs, params, name=name, user_attrs=user)
            n_out = node.num_outputs
            if not _is_int(n_out) or not 1 <= n_out <= MAX_OUTPUTS_PER_NODE:
                raise GraphError(f"{op.name} has {n_out} outputs with these attributes "
                                 f"(limit {MAX_OUTPUTS_PER_NODE})")
            _apply_input_hidden_keys(node, arg_keys)
        except NbdlError as e:
            msg = str(e)
            prefix = f"symbol JSON: node {i}" if repr(name) in msg[:300] else where
            raise type(e)(f"{prefix}: {msg}") from None
        except Exception as e:  # an op rule choking on odd attributes: still a bad file
            raise GraphError(f"{where}: {op_name} cannot be built from these attributes "
                             f"({type(e).__name__}: {_short(str(e))})") from None
        return node

    def _attrs(self, raw, where):
        """Merge ``attrs`` with MXNet 0.x's ``param`` (op parameters) and
        ``attr`` (node attributes); hidden keys get their ``__key__`` form."""
        out = {}
        for field in ("attr", "param", "attrs"):   # later fields win
            d = raw.get(field)
            if d is None:
                continue
            if not isinstance(d, dict):
                raise GraphError(f"{where}: {field!r} must be an object, got {_tname(d)}")
            for k, v in d.items():
                if not isinstance(v, _SCALARS):
                    raise GraphError(f"{where}: attribute {k!r} must be a string, got {_tname(v)}")
                out[user_attr_key(k)] = attr_to_str(v)
        return out

    @staticmethod
    def _check_var_args(op, params, inputs):
        # Checked before the op expands its input list from num_args.
        key = op.key_var_num_args
        if not key or key not in params:
            return
        spec = op.attrs.get(key)
        try:
            n = spec.parse(params[key]) if spec is not None else int(params[key])
        except (ValueError, TypeError, OverflowError):
            return  # parse_attrs reports it as an AttrError
        if n != len(inputs):
            raise GraphError(f"{op.name}: {key}={params[key]} but the node has "
                             f"{len(inputs)} inputs")

    def _entries(self, lst, what, limit):
        """``[[node_id, out_index(, version)], ...]`` referring to nodes < limit."""
        if not isinstance(lst, list):
            raise GraphError(f"{what} must be a list, got {_tname(lst)}")
        out = []
        for k, e in enumerate(lst):
            if (not isinstance(e, list) or len(e) not in (2, 3)
                    or not all(_is_int(x) for x in e)):
                raise GraphError(f"{what}[{k}] must be [node_id, output_index, version] "
                                 f"of integers, got {_short(e)}")
            nid, idx = e[0], e[1]
            if len(e) == 3 and e[2] < 0:
                raise GraphError(f"{what}[{k}]: negative version {e[2]}")
            total = len(self.doc["nodes"])
            if not 0 <= nid < total:
                raise GraphError(f"{what}[{k}] refers to node {nid}, which does not exist "
                                 f"(the file has {total} nodes)")
            if nid >= limit:
                raise GraphError(f"{what}[{k}] refers to node {nid}: a node may only use "
                                 f"nodes listed before it (forward reference or cycle)")
            node = self.nodes[nid]
            n_out = node.num_outputs
            if not 0 <= idx < n_out:
                raise GraphError(f"{what}[{k}] refers to output {idx} of node {nid} "
                                 f"({node.name!r}), which has {n_out} output(s)")
            out.append(Entry(node, idx))
        return out

    def _check_index_lists(self):
        n = len(self.nodes)
        args = self.doc.get("arg_nodes")
        if args is not None:
            if not isinstance(args, list) or not all(_is_int(a) for a in args):
                raise GraphError("symbol JSON: 'arg_nodes' must be a list of node ids")
            for a in args:
                if not 0 <= a < n or not self.nodes[a].is_variable:
                    raise GraphError(f"symbol JSON: 'arg_nodes' lists {a}, which is not "
                                     f"a variable node")
        ptr = self.doc.get("node_row_ptr")
        if ptr is not None:
            # Only the structure is checked: MXNet counts hidden outputs of
            # some ops differently, and nbdl derives the rows itself.
            if not isinstance(ptr, list) or not all(_is_int(p) for p in ptr):
                raise GraphError("symbol JSON: 'node_row_ptr' must be a list of integers")
            if len(ptr) != n + 1:
                raise GraphError(f"symbol JSON: 'node_row_ptr' has {len(ptr)} entries "
                                 f"for {n} nodes (expected {n + 1})")


def _version(doc):
    """``attrs.mxnet_version`` as an int (files without one are MXNet 0.8.0)."""
    top = doc.get("attrs", {})
    if top is None:
        top = {}
    if not isinstance(top, dict):
        raise GraphError(f"symbol JSON: top-level 'attrs' must be an object, got {_tname(top)}")
    v = top.get("mxnet_version")
    if v is None:
        return 800
    if (not isinstance(v, list) or len(v) != 2 or v[0] != "int" or not _is_int(v[1])):
        raise GraphError(f"symbol JSON: 'mxnet_version' must be [\"int\", version], got {_short(v)}")
    return v[1]


def _pop_input_hidden_keys(params, schema):
    """MXNet 0.x op attributes such as ``weight_lr_mult`` (``<input>_<hidden
    key>``): removed from ``params`` and returned as (key, input, hidden key, value)."""
    found = []
    for k in [k for k in params if k not in schema]:
        for hk in HIDDEN_KEYS:
            if k.endswith("_" + hk) and len(k) > len(hk) + 1:
                found.append((k, k[:-len(hk) - 1], hk, params.pop(k)))
                break
    return found


def _apply_input_hidden_keys(node, found):
    # As MXNet's upgrade does: the input variable gets ``__lr_mult__``; a key
    # that names no variable input stays on the node, as ``__key__``.
    names = node.op.list_inputs(node.attrs)
    for key, arg, hk, value in found:
        if arg in names and node.inputs[names.index(arg)].node.is_variable:
            node.inputs[names.index(arg)].node.user_attrs[f"__{hk}__"] = value
        else:
            node.user_attrs[f"__{key}__"] = value


def _add_missing_aux(op, params, inputs, name, attrs):
    """Files before MXNet 0.9.0 do not list aux states (BatchNorm's moving
    mean and var): add them as variables ``<node>_<aux>``, as MXNet does."""
    parsed, _ = op.parse_attrs(params, name)
    aux = op.list_aux(parsed)
    if not aux or len(inputs) != len(op.list_inputs(parsed)):
        return inputs
    return list(inputs) + [make_variable(f"{name}_{a}", attrs).output(0) for a in aux]


def _check_variable_attrs(attrs, where):
    if "__shape__" in attrs:
        try:
            shape = _parse_tuple(attrs["__shape__"])
            if any(d is not None and d < -1 for d in shape):
                raise ValueError("negative dimension (-1, unknown, is the only one)")
        except Exception as e:
            raise AttrError(f"{where}: attribute __shape__={_short(attrs['__shape__'])} is not "
                            f"a shape ({_short(str(e))})") from None
    if "__dtype__" in attrs:
        try:
            from_flag(attrs["__dtype__"])
        except Exception as e:
            raise AttrError(f"{where}: attribute __dtype__={_short(attrs['__dtype__'])} is not "
                            f"an MXNet dtype flag nbdl supports ({_short(str(e))})") from None


def _short(v, n=80):
    """repr(v), cut short: error messages quote values from untrusted files."""
    r = repr(v)
    return r if len(r) <= n else r[:n] + "..."
