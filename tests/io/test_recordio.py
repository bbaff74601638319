"""nbdl.recordio: the on-disk RecordIO format, the index file, IRHeader packing."""
import pickle
import struct

import numpy as np
import pytest

import nbdl
from nbdl import recordio
from nbdl.recordio import FormatError, ImageError, IRHeader, MXIndexedRecordIO, MXRecordIO, pack, unpack

MAGIC = struct.pack("<I", 0xced7230a)


def parse(raw):
    """The file as ``[(cflag, payload)]``, decoded here independently of nbdl."""
    out, pos = [], 0
    while pos < len(raw):
        magic, lrec = struct.unpack("<II", raw[pos:pos + 8])
        assert magic == 0xced7230a
        length = lrec & ((1 << 29) - 1)
        out.append((lrec >> 29, raw[pos + 8:pos + 8 + length]))
        pos += 8 + length + (-length) % 4
    assert pos == len(raw)
    return out


RECORDS = [b"hello", b"", b"abcd", MAGIC, b"ab" + MAGIC + b"cd", b"abcd" + MAGIC + b"xy" + MAGIC + MAGIC,
           b"x" + MAGIC + b"yyy", MAGIC * 3, bytes(range(256)) * 3 + b"tail"]


def test_round_trip_sequential(tmp_path):
    path = str(tmp_path / "a.rec")
    w = MXRecordIO(path, "w")
    for r in RECORDS:
        w.write(r)
    w.close()
    r = MXRecordIO(path, "r")
    assert [r.read() for _ in RECORDS] == RECORDS
    assert r.read() is None and r.read() is None
    r.reset()
    assert r.read() == RECORDS[0]
    r.close()
    r.close()  # closing twice is fine


def test_on_disk_layout(tmp_path):
    path = tmp_path / "a.rec"
    with MXRecordIO(str(path), "w") as w:
        w.write(b"hello")                          # padded to 8 bytes
        w.write(b"ab" + MAGIC + b"cd")             # unaligned magic: one plain record
        w.write(b"abcd" + MAGIC + b"xy")           # aligned magic: split in two parts
        w.write(b"abcd" + MAGIC + b"wxyz" + MAGIC)  # three parts, the last one empty
        w.write(MAGIC)                             # starts with the magic
    raw = path.read_bytes()
    assert raw[:16] == MAGIC + struct.pack("<I", 5) + b"hello\0\0\0"
    assert parse(raw) == [(0, b"hello"), (0, b"ab" + MAGIC + b"cd"), (1, b"abcd"), (3, b"xy"),
                          (1, b"abcd"), (2, b"wxyz"), (3, b""), (1, b""), (3, b"")]


def test_indexed_round_trip_and_index_file(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    w = MXIndexedRecordIO(idx, rec, "w")
    for i, r in enumerate(RECORDS):
        w.write_idx(i * 10, r)
    w.close()
    lines = (tmp_path / "a.idx").read_text().splitlines()
    offsets = [int(line.split("\t")[1]) for line in lines]
    assert [line.split("\t")[0] for line in lines] == [str(i * 10) for i in range(len(RECORDS))]
    assert offsets[0] == 0 and offsets[1] == 16  # 8-byte header + 'hello' padded to 8
    r = MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == [i * 10 for i in range(len(RECORDS))]
    for i in reversed(range(len(RECORDS))):
        assert r.read_idx(i * 10) == RECORDS[i]
    with pytest.raises(ImageError, match="no record with key 7"):
        r.read_idx(7)
    r.read_idx(20)
    r2 = pickle.loads(pickle.dumps(r))  # a pickled reader reopens the files at the start
    assert r2.keys == r.keys and r2.read() == RECORDS[0] and r2.read_idx(30) == RECORDS[3]
    with pytest.raises(ImageError, match="writer cannot be pickled"):
        pickle.dumps(MXRecordIO(str(tmp_path / "w.rec"), "w"))
    r.close()


def test_string_keys(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    with MXIndexedRecordIO(idx, rec, "w", key_type=str) as w:
        w.write_idx("cat", b"meow")
        w.write_idx("dog", b"woof")
    r = MXIndexedRecordIO(idx, rec, "r", key_type=str)
    assert r.keys == ["cat", "dog"] and r.read_idx("dog") == b"woof"


def test_pack_unpack_float_and_array_labels():
    s = pack(IRHeader(5, 3.5, 17, 2), b"payload")
    assert s[:24] == struct.pack("<IfQQ", 0, 3.5, 17, 2)  # a number label sets flag 0
    header, rest = unpack(s)
    assert header == IRHeader(0, 3.5, 17, 2) and rest == b"payload"
    labels = [1.0, -2.5, 7.0]
    s = pack(IRHeader(0, labels, 3, 0), b"xyz")
    assert s[:24] == struct.pack("<IfQQ", 3, 0.0, 3, 0)
    assert s[24:36] == np.asarray(labels, np.float32).tobytes()
    header, rest = unpack(s)
    assert header.flag == 3 and header.id == 3 and rest == b"xyz"
    np.testing.assert_array_equal(header.label, np.float32(labels))
    header, rest = unpack(pack((0, np.arange(4.0), 1, 0), b""))
    np.testing.assert_array_equal(header.label, np.arange(4.0))
    assert rest == b""


def test_pack_bad_input():
    with pytest.raises(nbdl.ArgumentError, match="IRHeader"):
        pack((0, 1.0), b"")
    with pytest.raises(nbdl.ArgumentError, match="bytes, got str"):
        pack(IRHeader(0, 1.0, 0, 0), "text")
    with pytest.raises(nbdl.ArgumentError, match="'IfQQ'"):
        pack(IRHeader(0, 1.0, -1, 0), b"")
    with pytest.raises(FormatError, match="shorter than the 24-byte"):
        unpack(b"short")
    with pytest.raises(FormatError, match="says 5 float32 labels but only 8 bytes"):
        unpack(struct.pack("<IfQQ", 5, 0, 0, 0) + b"\0" * 8)


def test_bad_files_and_modes(tmp_path):
    path = str(tmp_path / "a.rec")
    with pytest.raises(nbdl.ArgumentError, match="flag must be 'r' or 'w'"):
        MXRecordIO(path, "a")
    with pytest.raises(ImageError, match="cannot open"):
        MXRecordIO(str(tmp_path / "missing.rec"), "r")
    w = MXRecordIO(path, "w")
    with pytest.raises(ImageError, match="opened for writing, cannot read"):
        w.read()
    with pytest.raises(nbdl.ArgumentError, match="bytes, got str"):
        w.write("text")
    w.write(b"ok")
    w.close()
    with pytest.raises(ImageError, match="is closed"):
        w.write(b"more")
    (tmp_path / "junk.rec").write_bytes(b"\x01\x02\x03\x04\x05\x06\x07\x08")
    with pytest.raises(FormatError, match="bad RecordIO magic 0x04030201 at byte 0"):
        MXRecordIO(str(tmp_path / "junk.rec"), "r").read()
    raw = (tmp_path / "a.rec").read_bytes()
    (tmp_path / "cut.rec").write_bytes(raw[:-2])
    with pytest.raises(FormatError, match="claims 2 bytes but the file ends at byte 10"):
        MXRecordIO(str(tmp_path / "cut.rec"), "r").read()
    (tmp_path / "a.idx").write_text("0\t0\nnot-a-line\n")
    with pytest.raises(FormatError, match="line 2"):
        MXIndexedRecordIO(str(tmp_path / "a.idx"), path, "r")


def test_images_need_pillow_or_round_trip():
    img = (np.arange(8 * 6 * 3) % 251).astype(np.uint8).reshape(8, 6, 3)
    try:
        import PIL  # noqa: F401
    except ImportError:
        with pytest.raises(nbdl.NbdlError, match="Pillow"):
            recordio.pack_img(IRHeader(0, 1.0, 0, 0), img)
        with pytest.raises(nbdl.NbdlError, match="Pillow"):
            recordio.unpack_img(b"")
        return
    s = recordio.pack_img(IRHeader(0, 2.0, 9, 0), img, img_fmt=".png")
    header, out = recordio.unpack_img(s)
    assert header == IRHeader(0, 2.0, 9, 0)
    np.testing.assert_array_equal(out, img)  # PNG is lossless; channel order kept (BGR)
    _, gray = recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (8, 6)
    _, jpg = recordio.unpack_img(recordio.pack_img(IRHeader(0, 1.0, 0, 0), img, quality=100))
    assert jpg.shape == img.shape and np.abs(jpg.astype(int) - img).mean() < 12
    with pytest.raises(nbdl.ArgumentError, match="img_fmt"):
        recordio.pack_img(IRHeader(0, 1.0, 0, 0), img, img_fmt=".gif")


def _child_reads(reader, queue):
    queue.put(reader.read_idx(2))


def test_a_forked_reader_reopens_its_file(tmp_path):
    import multiprocessing
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    with MXIndexedRecordIO(idx, rec, "w") as w:
        for i, r in enumerate(RECORDS):
            w.write_idx(i, r)
    r = MXIndexedRecordIO(idx, rec, "r")
    r.read_idx(0)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_reads, args=(r, queue))
    child.start()
    got = queue.get(timeout=30)
    child.join(timeout=30)
    assert got == RECORDS[2]
    assert r.read() == RECORDS[1]  # the parent's position is its own
    w = MXRecordIO(str(tmp_path / "w.rec"), "w")
    w._pid = -1  # as if opened by another process
    with pytest.raises(ImageError, match="process other than the one that opened it"):
        w.write(b"x")
