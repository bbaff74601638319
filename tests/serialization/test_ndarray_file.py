"""MXNet NDArray files: round trips, files from an independent reference
writer (V1, V2, V3, pre-V1), sparse and unsupported content, malformed files,
file-system errors and crash-safe saving.  Files are read through ``nd.load``
/ ``nd.load_frombuffer`` (NDArrays on the CPU over ``nbdl.serialization``'s
numpy arrays), except where the numpy layer itself is the subject."""
import os
import struct

import numpy as np
import pytest

import mxnet_format as mx
import nbdl
from nbdl import serialization
from nbdl.ndarray import load, load_frombuffer
from nbdl.serialization import (FileError, FormatError, MissingFileError, ArgumentError,
                                UnsupportedFormatError, save, save_tobuffer)
from nbdl.serialization import ndarray_file

DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64, np.bool_]
SHAPES = [(), (0,), (1,), (5,), (2, 3), (3, 0, 2), (2, 1, 3, 2)]


def sample(shape, dtype, seed=0):
    rng = np.random.RandomState(seed)
    if dtype == np.bool_:
        return np.asarray(rng.rand(*shape) > 0.5)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.asarray(rng.randint(info.min, info.max, size=shape, dtype=dtype))
    return np.asarray(rng.randn(*shape) * 100).astype(dtype)


def same(a, b):
    """Bitwise equality of dtype, shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- round trips ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype_and_shape(tmp_path, dtype):
    data = {f"x{i}": sample(s, dtype, i) for i, s in enumerate(SHAPES)}
    fname = tmp_path / "a.params"
    save(fname, {k: nbdl.nd.array(v, dtype=dtype) for k, v in data.items()})
    out = load(fname)
    assert list(out) == list(data)
    for k, v in data.items():
        assert isinstance(out[k], nbdl.NDArray)
        assert out[k].device == nbdl.cpu()
        assert same(out[k].asnumpy(), v), k
    # Re-saving what was loaded gives the same bytes.
    save(tmp_path / "b.params", out)
    assert (tmp_path / "a.params").read_bytes() == (tmp_path / "b.params").read_bytes()


def test_list_single_and_dict_forms(tmp_path):
    a, b = sample((2, 3), np.float32), sample((4,), np.int64)
    save(tmp_path / "l", [a, nbdl.nd.array(b, dtype=np.int64)])
    got = load(tmp_path / "l")
    assert isinstance(got, list) and len(got) == 2
    assert same(got[0].asnumpy(), a) and same(got[1].asnumpy(), b)
    save(tmp_path / "one", nbdl.nd.array(a))
    got = load(tmp_path / "one")
    assert isinstance(got, list) and len(got) == 1 and same(got[0].asnumpy(), a)
    save(tmp_path / "t", (a,))
    assert same(load(tmp_path / "t")[0].asnumpy(), a)
    save(tmp_path / "d", {"b": b, "a": a, "ünï": a[:1]})
    got = load(tmp_path / "d")
    assert list(got) == ["b", "a", "ünï"] and same(got["ünï"].asnumpy(), a[:1])
    # Empty containers load as [] (MXNet: no names -> list).
    save(tmp_path / "e", {})
    assert load(tmp_path / "e") == []
    save(tmp_path / "e2", [])
    assert load(tmp_path / "e2") == []


def test_writer_matches_reference_bytes():
    a, h, z, s = (sample((2, 3), np.float32), sample((4,), np.float16),
                  np.zeros((0, 3), np.int8), np.array(7, np.int64))
    expect = mx.file([mx.array_v2(a), mx.array_v2(h), mx.array_v2(z), mx.array_v3(s)],
                     ["w", "half", "empty", "scalar"])
    assert save_tobuffer({"w": a, "half": h, "empty": z, "scalar": s}) == expect
    assert save_tobuffer([a]) == mx.file([mx.array_v2(a)])


def test_numpy_inputs_noncontiguous_and_big_endian():
    base = sample((4, 6), np.float64)
    strided = base[:, ::2]
    big = base.astype(">f8")
    got = load_frombuffer(save_tobuffer({"s": strided, "b": big, "t": base.T}))
    assert same(got["s"].asnumpy(), np.ascontiguousarray(strided))
    assert same(got["b"].asnumpy(), base)
    assert same(got["t"].asnumpy(), np.ascontiguousarray(base.T))


def test_loaded_arrays_are_writable_and_aligned():
    got = load_frombuffer(save_tobuffer([sample((3, 5), np.float64), sample((7,), np.int8)]))
    for x in got:
        arr = x._data
        assert arr.flags.c_contiguous and arr.flags.writeable and arr.flags.aligned
    got[0][:] = 1.0
    assert np.all(got[0].asnumpy() == 1.0)


def test_loaded_arrays_work_with_ops():
    got = load_frombuffer(save_tobuffer({"x": np.arange(6, dtype=np.float32).reshape(2, 3)}))
    y = got["x"] * 2 + 1
    np.testing.assert_array_equal(y.asnumpy(), np.arange(6).reshape(2, 3) * 2 + 1)


def test_serialization_reads_numpy_arrays(tmp_path):
    # Below the NDArray class the format is numpy arrays; nd.load wraps them.
    a, b = sample((2, 3), np.float32), sample((4,), np.int64)
    save(tmp_path / "f", {"a": nbdl.nd.array(a), "b": b})
    got = serialization.load(tmp_path / "f")
    assert list(got) == ["a", "b"]
    assert all(type(v) is np.ndarray for v in got.values())
    assert same(got["a"], a) and same(got["b"], b)
    got = serialization.load_frombuffer(save_tobuffer([a]))
    assert type(got) is list and type(got[0]) is np.ndarray and same(got[0], a)


def test_load_accepts_bytes_bytearray_memoryview(tmp_path):
    blob = save_tobuffer({"a": sample((3,), np.int32)})
    for buf in (blob, bytearray(blob), memoryview(blob)):
        assert same(load_frombuffer(buf)["a"].asnumpy(), sample((3,), np.int32))
    (tmp_path / "f").write_bytes(blob)
    assert same(load(str(tmp_path / "f"))["a"].asnumpy(), sample((3,), np.int32))
    assert same(load(os.fsencode(tmp_path / "f"))["a"].asnumpy(), sample((3,), np.int32))


# -- files written by the reference writer (MXNet's older and newer layouts) -------

@pytest.mark.parametrize("writer", [mx.array_v1, mx.array_v2, mx.array_legacy],
                         ids=["v1", "v2", "legacy"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reads_reference_layouts(writer, dtype):
    arrays = [sample(s, dtype, i) for i, s in enumerate(SHAPES) if s != ()]
    names = [f"p{i}" for i in range(len(arrays))]
    got = load_frombuffer(mx.file([writer(a) for a in arrays], names))
    assert list(got) == names
    for n, a in zip(names, arrays):
        assert same(got[n].asnumpy(), a), (n, a.shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reads_reference_v3_including_0d(dtype):
    arrays = [sample(s, dtype, i) for i, s in enumerate(SHAPES)]
    got = load_frombuffer(mx.file([mx.array_v3(a) for a in arrays]))
    assert isinstance(got, list)
    for x, a in zip(got, arrays):
        assert same(x.asnumpy(), a)


def test_reads_mixed_layouts_and_gpu_context():
    a, b, c, d = (sample((2, 2), np.float32, k) for k in range(4))
    blob = mx.file([mx.array_legacy(a), mx.array_v1(b, dev_type=mx.GPU),
                    mx.array_v2(c, dev_type=mx.GPU), mx.array_v3(d)], ["a", "b", "c", "d"])
    got = load_frombuffer(blob)
    for k, v in zip("abcd", (a, b, c, d)):
        assert same(got[k].asnumpy(), v) and got[k].device == nbdl.cpu()


def test_none_arrays_load_as_none():
    blob = mx.file([mx.none_v2(), mx.array_v2(np.ones(2, np.float32)), mx.none_v3(),
                    mx.none_legacy(), mx.u32(mx.V3) + mx.i32(0) + mx.shape64((2, -1)),
                    mx.u32(mx.V1) + mx.i32(0)])
    got = load_frombuffer(blob)
    assert [x is None for x in got] == [True, False, True, True, True, True]


def test_bool_bytes_are_normalised():
    rec = (mx.u32(mx.V2) + mx.i32(0) + mx.shape64((3,)) + mx.ctx() + mx.i32(7)
           + bytes([0, 1, 7]))
    got = load_frombuffer(mx.file([rec]))[0].asnumpy()
    assert got.dtype == np.bool_ and got.tolist() == [False, True, True]
    assert got.view(np.uint8).tolist() == [0, 1, 1]


# -- well-formed content nbdl cannot hold ------------------------------------------

def test_row_sparse_names_the_key():
    rs = mx.row_sparse_v2(np.ones((2, 3)), [0, 4], (6, 3))
    blob = mx.file([mx.array_v2(np.ones(2, np.float32)), rs], ["dense", "emb_weight"])
    with pytest.raises(UnsupportedFormatError, match=r"'emb_weight'.*row_sparse.*not supported"):
        load_frombuffer(blob)


def test_csr_names_the_key_and_unnamed_index():
    csr = mx.csr_v2([1.0, 2.0], [0, 1, 2], [0, 3], (2, 4))
    with pytest.raises(UnsupportedFormatError, match=r"'m'.*csr storage is not supported"):
        load_frombuffer(mx.file([csr, mx.array_v2(np.ones(1, np.float32))], ["m", "n"]))
    with pytest.raises(UnsupportedFormatError, match=r"array 1: csr"):
        load_frombuffer(mx.file([mx.array_v2(np.ones(1, np.float32)), csr]))


def test_unsupported_dtype_names_the_key():
    rec = mx.u32(mx.V2) + mx.i32(0) + mx.shape64((2,)) + mx.ctx() + mx.i32(12) + b"\0" * 4
    with pytest.raises(UnsupportedFormatError, match=r"'w'.*bfloat16"):
        load_frombuffer(mx.file([rec], ["w"]))


def test_sparse_error_is_a_format_error_and_nbdl_error():
    csr = mx.csr_v2([1.0], [0, 1], [0], (1, 1))
    with pytest.raises(FormatError) as e:
        load_frombuffer(mx.file([csr]))
    assert isinstance(e.value, nbdl.NbdlError) and isinstance(e.value, ValueError)


# -- malformed files --------------------------------------------------------------

GOOD = mx.array_v2(np.arange(3, dtype=np.float32))


def v2_with(shape_bytes, flag=0, data=b"", dev=mx.CPU, stype=0):
    return mx.u32(mx.V2) + mx.i32(stype) + shape_bytes + mx.ctx(dev) + mx.i32(flag) + data


MALFORMED = {
    "empty": (b"", "header"),
    "short header": (mx.u64(mx.LIST) + mx.u64(0), "header"),
    "wrong list magic": (mx.u64(0x113) + mx.u64(0) + mx.u64(0) + mx.u64(0), "magic 0x113"),
    "json, not params": (b'{"nodes": [], "arg_nodes": [], "heads": []}', "not an MXNet"),
    "absurd array count": (mx.u64(mx.LIST) + mx.u64(0) + mx.u64(2**63) + mx.u64(0),
                           "declares 9223372036854775808 arrays"),
    "count beyond arrays": (mx.u64(mx.LIST) + mx.u64(0) + mx.u64(2) + GOOD, "array 1"),
    "unknown array magic": (mx.file([mx.u32(0xDEADBEEF) + GOOD[4:]]), "0xdeadbeef"),
    "huge ndim": (mx.file([v2_with(mx.i32(1000))]), "ndim 1000"),
    "negative ndim": (mx.file([v2_with(mx.i32(-7))]), "ndim -7"),
    "negative dim": (mx.file([v2_with(mx.shape64((2, -3)))]), "negative dimension"),
    "absurd dims": (mx.file([v2_with(mx.shape64((2**40, 2**40)))]), "too large"),
    "absurd zero-size dims": (mx.file([v2_with(mx.shape64((0, 2**62)))]), "too large"),
    "data beyond file": (mx.file([v2_with(mx.shape64((1000,)), data=b"\0" * 16)]),
                         "needs 4000 bytes"),
    "unknown type flag": (mx.file([v2_with(mx.shape64((1,)), flag=99, data=b"\0" * 4)]),
                          "type flag 99"),
    "negative type flag": (mx.file([v2_with(mx.shape64((1,)), flag=-1, data=b"\0" * 4)]),
                           "type flag -1"),
    "unknown device": (mx.file([v2_with(mx.shape64((1,)), dev=9, data=b"\0" * 4)]),
                       "device type 9"),
    "unknown storage type": (mx.file([v2_with(mx.shape64((1,)), stype=5)]), "storage type 5"),
    "v3 sparse": (mx.file([mx.u32(mx.V3) + mx.i32(1) + GOOD[8:]]), "must be dense"),
    "legacy ndim too big": (mx.file([mx.u32(33) + GOOD[4:]]), "0x00000021"),
    "name count mismatch": (mx.file([GOOD, GOOD], ["a"]), "2 arrays but 1 names"),
    "names without arrays": (mx.file([], ["a"]), "0 arrays but 1 names"),
    "absurd name length": (mx.file([GOOD])[:-8] + mx.u64(1) + mx.u64(2**62),
                           "name 0 needs"),
    "name beyond file": (mx.file([GOOD])[:-8] + mx.u64(1) + mx.u64(10) + b"abc", "name 0"),
    "non-utf8 name": (mx.file([GOOD], [b"\xff\xfe"]), "not valid UTF-8"),
    "duplicate names": (mx.file([GOOD, GOOD], ["w", "w"]), "'w' appears more than once"),
    "trailing bytes": (mx.file([GOOD]) + b"\0", "1 unexpected bytes"),
    "missing name count": (mx.file([GOOD])[:-8], "name count"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_raises_format_error(case, tmp_path):
    blob, msg = MALFORMED[case]
    with pytest.raises(FormatError, match=msg) as e:
        load_frombuffer(blob)
    assert "<buffer>" in str(e.value)
    (tmp_path / "bad.params").write_bytes(blob)
    with pytest.raises(FormatError, match=msg) as e:
        load(tmp_path / "bad.params")
    assert "bad.params" in str(e.value)


def test_every_truncation_is_a_format_error():
    blob = mx.file([mx.array_v2(sample((2, 3), np.float32)), mx.array_legacy(np.ones(2)),
                    mx.array_v3(np.array(1, np.int8)),
                    mx.row_sparse_v2(np.ones((1, 2)), [3], (4, 2))], ["a", "bb", "c", "d"])
    with pytest.raises(UnsupportedFormatError):
        load_frombuffer(blob)
    for n in range(len(blob)):
        with pytest.raises(FormatError):
            load_frombuffer(blob[:n])


# -- bad arguments and the file system ---------------------------------------------

def test_save_argument_errors(tmp_path):
    f = tmp_path / "x"
    with pytest.raises(ArgumentError, match="dict keys must be str"):
        save(f, {1: np.ones(2)})
    with pytest.raises(ArgumentError, match="key 'a' is a list"):
        save(f, {"a": [1, 2]})
    with pytest.raises(ArgumentError, match="item 1 is a int"):
        save(f, [np.ones(1), 3])
    with pytest.raises(ArgumentError, match="data must be"):
        save(f, "abc")
    with pytest.raises(nbdl.DTypeError, match="key 'c'.*complex128"):
        save(f, {"c": np.ones(2, np.complex128)})
    with pytest.raises(nbdl.DTypeError, match="object"):
        save(f, [np.array([None])])
    with pytest.raises(ArgumentError, match="file name"):
        save(3, [np.ones(1)])
    with pytest.raises(ArgumentError, match="bytes, bytearray or memoryview"):
        load_frombuffer("not bytes")
    assert not os.path.exists(f)


def test_file_system_errors(tmp_path):
    with pytest.raises(MissingFileError, match="nope.params") as e:
        load(tmp_path / "nope.params")
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(FileError, match="is a directory"):
        load(tmp_path)
    with pytest.raises(FileError, match="is a directory"):
        save(tmp_path, [np.ones(1)])
    with pytest.raises(MissingFileError, match="does not exist"):
        save(tmp_path / "no_dir" / "x.params", [np.ones(1)])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_load_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match="not a regular file"):
        load(fifo)


def test_save_through_symlink_writes_the_target(tmp_path):
    target = tmp_path / "real.params"
    save(target, [np.ones(1)])
    link = tmp_path / "link.params"
    link.symlink_to(target)
    save(link, [np.zeros(3)])
    assert link.is_symlink()
    assert load(target)[0].shape == (3,)


# -- crash-safe saving ------------------------------------------------------------

def _leftovers(d):
    return [p for p in os.listdir(d) if p.endswith(".tmp")]


def test_failure_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    fname = tmp_path / "model.params"
    save(fname, {"w": np.arange(4, dtype=np.float32)})
    before = fname.read_bytes()
    real_write = ndarray_file._write

    def dying_write(f, arrays, names):
        f.write(struct.pack("<Q", 0x112))       # some bytes hit the temporary file
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(ndarray_file, "_write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        save(fname, {"w": np.zeros(100, np.float32)})
    assert fname.read_bytes() == before
    assert _leftovers(tmp_path) == []
    monkeypatch.setattr(ndarray_file, "_write", real_write)
    save(fname, {"w": np.zeros(2, np.float32)})
    assert load(fname)["w"].shape == (2,)


def test_failure_at_rename_keeps_the_old_file(tmp_path, monkeypatch):
    from nbdl.serialization import atomic
    fname = tmp_path / "model.params"
    save(fname, [np.ones(3)])
    before = fname.read_bytes()

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", no_space)
    with pytest.raises(FileError, match="model.params.*No space left") as e:
        save(fname, [np.zeros(5)])
    assert isinstance(e.value, OSError)
    monkeypatch.undo()
    assert fname.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_save_keeps_the_mode_of_the_replaced_file(tmp_path):
    fname = tmp_path / "m.params"
    save(fname, [np.ones(1)])
    os.chmod(fname, 0o640)
    save(fname, [np.ones(2)])
    assert (os.stat(fname).st_mode & 0o777) == 0o640


def test_nd_namespace_wiring():
    # nbdl.nd.save / load / load_frombuffer and nbdl.model are re-exported by
    # the package __init__ files.
    if not hasattr(nbdl.nd, "load_frombuffer") or not hasattr(nbdl, "model"):
        pytest.skip("nbdl.nd.save/load/load_frombuffer and nbdl.model are not re-exported yet")
    assert nbdl.nd.save is save and nbdl.nd.load is load
    assert nbdl.nd.load_frombuffer is load_frombuffer
    from nbdl import model
    assert nbdl.model is model
