"""An independent reference writer for MXNet NDArray files, written from the
format description (MXNet's NDArray::Save / LegacyLoad and the list format of
MXNDArraySave) with plain struct.pack, for the tests to check nbdl's reader
and writer against.  Imported by name (pytest puts this directory on sys.path).
"""
import struct

import numpy as np

LIST = 0x112
V1 = 0xF993FAC8
V2 = 0xF993FAC9
V3 = 0xF993FACA
FLAG = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
        "int64": 6, "bool": 7}
CPU, GPU = 1, 2


def u32(v):
    return struct.pack("<I", v)


def i32(v):
    return struct.pack("<i", v)


def u64(v):
    return struct.pack("<Q", v)


def i64(v):
    return struct.pack("<q", v)


def raw(a):
    a = np.asarray(a)
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()


def shape64(shape):
    """TShape::Save: int32 ndim, then int64 dims."""
    return i32(len(shape)) + b"".join(i64(d) for d in shape)


def ctx(dev_type=CPU, dev_id=0):
    return i32(dev_type) + i32(dev_id)


def array_v2(a, dev_type=CPU, magic=V2):
    a = np.asarray(a)
    return (u32(magic) + i32(0) + shape64(a.shape) + ctx(dev_type)
            + i32(FLAG[a.dtype.name]) + raw(a))


def array_v3(a, dev_type=CPU):
    return array_v2(a, dev_type, magic=V3)


def array_v1(a, dev_type=CPU):
    a = np.asarray(a)
    return u32(V1) + shape64(a.shape) + ctx(dev_type) + i32(FLAG[a.dtype.name]) + raw(a)


def array_legacy(a, dev_type=CPU):
    """Pre-V1: no magic; uint32 ndim and uint32 dims."""
    a = np.asarray(a)
    return (u32(a.ndim) + b"".join(u32(d) for d in a.shape) + ctx(dev_type)
            + i32(FLAG[a.dtype.name]) + raw(a))


def none_v2():
    return u32(V2) + i32(0) + i32(0)


def none_v3():
    return u32(V3) + i32(0) + i32(-1)


def none_legacy():
    return u32(0)


def row_sparse_v2(values, indices, shape):
    """A row_sparse array: storage shape = values.shape, one aux (int64 row indices)."""
    values = np.asarray(values, np.float32)
    indices = np.asarray(indices, np.int64)
    return (u32(V2) + i32(1) + shape64(values.shape) + shape64(shape) + ctx()
            + i32(FLAG["float32"]) + i32(FLAG["int64"]) + shape64(indices.shape)
            + raw(values) + raw(indices))


def csr_v2(data, indptr, indices, shape):
    """A csr array: storage shape = data.shape, aux 0 indptr, aux 1 indices."""
    data = np.asarray(data, np.float32)
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    return (u32(V2) + i32(2) + shape64(data.shape) + shape64(shape) + ctx()
            + i32(FLAG["float32"]) + i32(FLAG["int64"]) + shape64(indptr.shape)
            + i32(FLAG["int64"]) + shape64(indices.shape)
            + raw(data) + raw(indptr) + raw(indices))


def name(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return u64(len(b)) + b


def file(array_records, names=()):
    """The list format: magic, reserved, count, arrays, name count, names."""
    return (u64(LIST) + u64(0) + u64(len(array_records)) + b"".join(array_records)
            + u64(len(names)) + b"".join(name(n) for n in names))
