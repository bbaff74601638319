"""RecordIO reader/writer: on-disk layout, magic splitting, index files,
image record headers and corrupted files."""
import io
import struct

import numpy as np
import pytest

from nbdl import NbdlError
from nbdl.gluon.data.vision import recordio
from nbdl.gluon.data.vision.image import FormatError, ImageError

MAGIC = struct.pack("<I", 0xCED7230A)


def _write(path, records):
    w = recordio.MXRecordIO(str(path), "w")
    for r in records:
        w.write(r)
    w.close()


def _read_all(path):
    r = recordio.MXRecordIO(str(path), "r")
    out = []
    while True:
        rec = r.read()
        if rec is None:
            break
        out.append(rec)
    r.close()
    return out


def test_layout_of_a_plain_record(tmp_path):
    path = tmp_path / "a.rec"
    _write(path, [b"abcde"])
    raw = path.read_bytes()
    # magic, lrecord (cflag 0, length 5), payload, 3 bytes of padding
    assert raw == MAGIC + struct.pack("<I", 5) + b"abcde" + b"\0\0\0"


def test_round_trip_various_lengths(tmp_path):
    path = tmp_path / "a.rec"
    recs = [b"", b"x", b"ab", b"abc", b"abcd", bytes(range(256)) * 3]
    _write(path, recs)
    assert _read_all(path) == recs


def test_magic_inside_payload_is_split_and_restored(tmp_path):
    path = tmp_path / "a.rec"
    payload = b"1234" + MAGIC + b"5678" + MAGIC + b"9"
    unaligned = b"12" + MAGIC + b"34"         # not at an aligned offset: no split
    _write(path, [payload, unaligned, MAGIC])
    raw = path.read_bytes()
    # first record: three parts with flags 1, 2, 3
    flags = []
    pos = 0
    for _ in range(3):
        assert raw[pos:pos + 4] == MAGIC
        lrec = struct.unpack("<I", raw[pos + 4:pos + 8])[0]
        flags.append(lrec >> 29)
        length = lrec & ((1 << 29) - 1)
        pos += 8 + (length + 3) // 4 * 4
    assert flags == [1, 2, 3]
    assert _read_all(path) == [payload, unaligned, MAGIC]


def test_indexed_round_trip_and_random_access(tmp_path):
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    w = recordio.MXIndexedRecordIO(str(idx), str(rec), "w")
    for k in (3, 1, 2):
        w.write_idx(k, b"rec%d" % k)
    w.close()
    lines = idx.read_text().splitlines()
    assert [l.split("\t")[0] for l in lines] == ["3", "1", "2"]
    r = recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    assert r.keys == [3, 1, 2]
    assert r.read_idx(2) == b"rec2"
    assert r.read_idx(3) == b"rec3"
    with pytest.raises(ImageError, match="no record with key 9"):
        r.read_idx(9)
    r.close()


def test_pack_unpack_scalar_and_array_labels():
    s = recordio.pack(recordio.IRHeader(0, 3.5, 7, 0), b"payload")
    header, body = recordio.unpack(s)
    assert header == recordio.IRHeader(0, 3.5, 7, 0) and body == b"payload"
    s = recordio.pack(recordio.IRHeader(0, [1.0, 2.0, 4.0], 8, 0), b"xy")
    assert struct.unpack("<IfQQ", s[:24]) == (3, 0.0, 8, 0)
    header, body = recordio.unpack(s)
    assert header.flag == 3 and body == b"xy"
    np.testing.assert_array_equal(header.label, np.array([1, 2, 4], np.float32))


def test_pack_img_npy_round_trip():
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    s = recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), img, img_fmt=".npy")
    header, out = recordio.unpack_img(s)
    np.testing.assert_array_equal(out, img)
    _, gray = recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (2, 3, 1)


def test_corrupt_magic(tmp_path):
    path = tmp_path / "bad.rec"
    path.write_bytes(b"\x01\x02\x03\x04" + struct.pack("<I", 4) + b"abcd")
    with pytest.raises(FormatError, match="bad RecordIO magic"):
        _read_all(path)


def test_truncated_header_and_payload(tmp_path):
    path = tmp_path / "t.rec"
    path.write_bytes(MAGIC + b"\x05")
    with pytest.raises(FormatError, match="truncated record header"):
        _read_all(path)
    path.write_bytes(MAGIC + struct.pack("<I", 1000) + b"abcd")
    with pytest.raises(FormatError, match="claims 1000 bytes"):
        _read_all(path)


def test_bad_continuation_flag(tmp_path):
    path = tmp_path / "f.rec"
    path.write_bytes(MAGIC + struct.pack("<I", (2 << 29) | 4) + b"abcd")
    with pytest.raises(FormatError, match="continuation flag 2"):
        _read_all(path)
    # a first part that never gets its last part
    path.write_bytes(MAGIC + struct.pack("<I", (1 << 29) | 4) + b"abcd")
    with pytest.raises(FormatError, match="truncated"):
        _read_all(path)


def test_bad_index_files(tmp_path):
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    _write(rec, [b"abcd"])
    idx.write_text("0\t0\n1\tnotanumber\n")
    with pytest.raises(FormatError, match="line 2"):
        recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    idx.write_text("0\t99999\n")
    with pytest.raises(FormatError, match="outside"):
        recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    idx.write_text("0\t0\n0\t0\n")
    with pytest.raises(FormatError, match="duplicate key"):
        recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    idx.write_text("0\t4\n")           # points into the middle of a record
    r = recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    with pytest.raises(FormatError, match="bad RecordIO magic"):
        r.read_idx(0)
    r.close()


def test_unpack_short_records():
    with pytest.raises(FormatError, match="shorter than"):
        recordio.unpack(b"abc")
    s = struct.pack("<IfQQ", 5, 0.0, 0, 0) + b"\0" * 8   # says 5 labels, holds 2
    with pytest.raises(FormatError, match="5 float32 labels"):
        recordio.unpack(s)


def test_errors_are_nbdl_errors(tmp_path):
    with pytest.raises(NbdlError):
        recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    with pytest.raises(NbdlError, match="flag must be"):
        recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    w = recordio.MXRecordIO(str(tmp_path / "x.rec"), "w")
    with pytest.raises(ImageError, match="cannot read"):
        w.read()
    w.close()


def test_reader_pickles_and_reopens(tmp_path):
    import pickle
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    w = recordio.MXIndexedRecordIO(str(idx), str(rec), "w")
    w.write_idx(0, b"zero")
    w.close()
    r = recordio.MXIndexedRecordIO(str(idx), str(rec), "r")
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_idx(0) == b"zero"
    r.close()
    r2.close()


def test_npy_payload_is_not_unpickled():
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    s = recordio.pack((0, 0.0, 0, 0), buf.getvalue())
    with pytest.raises(ImageError, match="cannot read the .npy image"):
        recordio.unpack_img(s)
