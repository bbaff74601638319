"""nbdl.io.ImageRecordIter: RecordIO image files written with nbdl.recordio,
read back against numpy references of the decoded, cropped, normalised images."""
import numpy as np
import pytest

import nbdl
from nbdl import recordio
from nbdl.io import ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter
from nbdl.recordio import IRHeader

pytest.importorskip("PIL")

SIZES = [(12, 16), (20, 10), (9, 9), (16, 16)]


def write_rec(tmp_path, n=10, sizes=SIZES, label_width=1, gray=False, name="a"):
    """A .rec/.idx pair of PNG images; returns (rec, idx, RGB sources, labels)."""
    rng = np.random.RandomState(4)
    rec, idx = str(tmp_path / f"{name}.rec"), str(tmp_path / f"{name}.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    images, labels = [], []
    for i in range(n):
        h, wd = sizes[i % len(sizes)]
        bgr = rng.randint(0, 256, size=(h, wd) if gray else (h, wd, 3)).astype(np.uint8)
        label = (float(i) if label_width == 1
                 else np.arange(label_width, dtype=np.float32) + 10 * i)
        w.write_idx(i, recordio.pack_img(IRHeader(0, label, 100 + i, 0), bgr, img_fmt=".png"))
        images.append(bgr[:, :, None] if gray else bgr[:, :, ::-1])  # pack_img takes BGR
        labels.append(label)
    w.close()
    return rec, idx, images, labels


def center_crop_chw(img, h, w):
    y, x = (img.shape[0] - h) // 2, (img.shape[1] - w) // 2
    return img[y:y + h, x:x + w].transpose(2, 0, 1).astype(np.float32)


def epoch(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad, b.index) for b in it]


def test_batches_are_the_normalised_centre_crops(tmp_path):
    rec, _, images, _ = write_rec(tmp_path)
    mean = np.array([120, 110.5, 100], np.float32)[:, None, None]
    std = np.array([50, 60, 70], np.float32)[:, None, None]
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4, mean_r=120,
                         mean_g=110.5, mean_b=100, std_r=50, std_g=60, std_b=70, scale=0.5)
    assert it.provide_data[0].shape == (4, 3, 8, 8) and it.provide_label[0].shape == (4,)
    batches = epoch(it)
    assert [b[2] for b in batches] == [0, 0, 2]
    order = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]  # the last batch is filled from the start
    data = np.concatenate([b[0] for b in batches])
    want = np.stack([(center_crop_chw(images[i], 8, 8) - mean) * (np.float32(0.5) / std)
                     for i in order])
    np.testing.assert_allclose(data, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), order)
    np.testing.assert_array_equal(batches[0][3], [100, 101, 102, 103])  # the headers' ids
    # the next epoch goes on after the two images the wrapped batch took
    it.reset()
    assert [list(b[1]) for b in epoch(it)] == [[2, 3, 4, 5], [6, 7, 8, 9]]


def test_without_round_batch_the_last_batch_is_padded_with_zeros(tmp_path):
    rec, _, images, _ = write_rec(tmp_path)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4, round_batch=False)
    for _ in range(2):
        batches = epoch(it)
        assert [b[2] for b in batches] == [0, 0, 2]
        last = batches[-1][0]
        np.testing.assert_array_equal(last[:2], [center_crop_chw(images[i], 8, 8) for i in (8, 9)])
        assert not last[2:].any()
        it.reset()


def test_resize_then_crop_and_scale_up_of_small_images(tmp_path):
    rec, _, images, _ = write_rec(tmp_path, n=4)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 6, 6), batch_size=4, resize=8,
                         inter_method=0)
    data = epoch(it)[0][0]
    for k, img in enumerate(images):
        h, w = img.shape[:2]
        nh, nw = (8 * h // w, 8) if h > w else (8, 8 * w // h)  # shorter edge to 8
        ys = np.floor(np.arange(nh) * (h / nh)).astype(int)  # nearest neighbour
        xs = np.floor(np.arange(nw) * (w / nw)).astype(int)
        np.testing.assert_array_equal(data[k], center_crop_chw(img[ys][:, xs], 6, 6))
    # data_shape larger than the image: MXNet scales the image up to cover it
    big = ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 14, 18), batch_size=4)
    out = epoch(big)[0][0]
    assert out.shape == (4, 3, 14, 18) and out.dtype == np.uint8
    same = images[3]  # 16x16 -> 18x18 bilinear: the centre keeps the image's mean
    assert abs(float(out[3].mean()) - float(same.mean())) < 8


def test_mirror_and_the_integer_dtypes(tmp_path):
    rec, _, images, _ = write_rec(tmp_path, n=5)
    crops = [center_crop_chw(img, 8, 8) for img in images]
    u8 = epoch(ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5,
                               dtype="uint8", mirror=True, mean_r=10))[0][0]
    assert u8.dtype == np.uint8  # uint8 output is not normalised
    np.testing.assert_array_equal(u8, np.stack([c[:, :, ::-1] for c in crops]))
    i8 = epoch(ImageRecordInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5,
                                   mean_r=120.5, mean_g=3))[0][0]
    mean = np.array([121, 3, 0], np.float32)[:, None, None]  # C's round: 120.5 -> 121
    np.testing.assert_array_equal(i8, np.clip(np.stack(crops) - mean, -128, 127))


def test_random_crops_and_mirrors_are_seeded_crops_of_the_image(tmp_path):
    rec, _, images, _ = write_rec(tmp_path, n=4, sizes=[(12, 12)])

    def run(threads, seed_aug=7):
        it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4, rand_crop=True,
                             rand_mirror=True, seed_aug=seed_aug, preprocess_threads=threads)
        return np.concatenate([b[0] for e in range(3) for b in (epoch(it), it.reset())[0]])

    out = run(1)
    np.testing.assert_array_equal(out, run(3))  # threads do not change the draws
    assert not np.array_equal(out, run(1, seed_aug=8))
    flips = set()
    for k, got in enumerate(out):
        img = images[k % 4].transpose(2, 0, 1).astype(np.float32)
        hits = [(y, x, f) for y in range(5) for x in range(5) for f in (0, 1)
                if np.array_equal(got, img[:, y:y + 8, x:x + 8][:, :, ::-1] if f
                                  else img[:, y:y + 8, x:x + 8])]
        assert hits, k
        flips.add(hits[0][2])
    assert flips == {0, 1}


def test_labels_from_arrays_and_from_an_image_list(tmp_path):
    rec, _, _, labels = write_rec(tmp_path, n=5, label_width=3)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5, label_width=3)
    assert it.provide_label[0].shape == (5, 3)
    np.testing.assert_array_equal(epoch(it)[0][1], np.stack(labels))
    with pytest.raises(nbdl.ShapeError, match="holds 3 label.s. but label_width is 1"):
        next(ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5))
    lst = tmp_path / "a.lst"
    lst.write_text("".join(f"{104 - i}\t{i}.5\t{-i}\timg{i}.png\n" for i in range(5)))
    it = ImageRecordIter(path_imgrec=rec, path_imglist=str(lst), data_shape=(3, 8, 8),
                         batch_size=5, label_width=2)
    np.testing.assert_array_equal(epoch(it)[0][1], [[4.5, -4], [3.5, -3], [2.5, -2],
                                                    [1.5, -1], [0.5, 0]])
    lst.write_text("100\t1\tx.png\n")
    with pytest.raises(nbdl.ShapeError, match="no label for the record with id 101"):
        next(ImageRecordIter(path_imgrec=rec, path_imglist=str(lst), data_shape=(3, 8, 8),
                             batch_size=2, label_width=1))


@pytest.mark.parametrize("with_idx", [False, True])
def test_parts_split_the_records(tmp_path, with_idx):
    rec, idx, _, _ = write_rec(tmp_path)
    seen = []
    for part in range(3):
        it = ImageRecordIter(path_imgrec=rec, path_imgidx=idx if with_idx else "",
                             data_shape=(3, 8, 8), batch_size=1, num_parts=3, part_index=part)
        seen.append([int(b[1][0]) for b in epoch(it)])
    assert sorted(sum(seen, [])) == list(range(10))
    if with_idx:  # dmlc splits an index by count: ceil(10 / 3) records a part
        assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    else:  # by bytes: each part holds the records that start in its third of the file
        size = (tmp_path / "a.rec").stat().st_size
        step = -(-size // 3)
        step += -step % 4
        starts = recordio.MXRecordIO(rec, "r").record_offsets()
        assert seen == [[i for i, s in enumerate(starts) if p * step <= s < (p + 1) * step]
                        for p in range(3)]


def test_a_directory_of_record_files_is_read_as_one(tmp_path):
    d = tmp_path / "recs"
    d.mkdir()
    write_rec(d, n=3, name="b")
    write_rec(d, n=2, name="a")
    for idx in d.glob("*.idx"):
        idx.unlink()
    it = ImageRecordIter(path_imgrec=str(d), data_shape=(3, 8, 8), batch_size=5)
    assert [int(v) for v in epoch(it)[0][1]] == [0, 1, 0, 1, 2]  # a.rec, then b.rec


def test_shuffle_draws_a_permutation_every_epoch(tmp_path):
    rec, idx, _, _ = write_rec(tmp_path)
    it = ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8), batch_size=5,
                         shuffle=True, seed=3)
    orders = []
    for _ in range(3):
        orders.append([int(v) for b in epoch(it) for v in b[1]])
        it.reset()
    assert all(sorted(o) == list(range(10)) for o in orders)
    assert orders[0] != orders[1] or orders[1] != orders[2]


def test_gray_and_four_channel_images(tmp_path):
    rec, _, images, _ = write_rec(tmp_path, n=3, sizes=[(10, 12)], gray=True)
    gray = epoch(ImageRecordIter(path_imgrec=rec, data_shape=(1, 8, 8), batch_size=3))[0][0]
    np.testing.assert_array_equal(gray, [center_crop_chw(i, 8, 8) for i in images])
    color = epoch(ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=3))[0][0]
    np.testing.assert_array_equal(color, np.repeat(gray, 3, axis=1))
    with pytest.raises(nbdl.ShapeError, match="has 1 channels, data_shape asks for 4"):
        next(ImageRecordIter(path_imgrec=rec, data_shape=(4, 8, 8), batch_size=3))


def test_mean_image_is_computed_once_and_then_read(tmp_path):
    rec, _, images, _ = write_rec(tmp_path, n=4, sizes=[(8, 8)])
    path = str(tmp_path / "mean.nd")
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4, mean_img=path)
    mean = np.mean([i.transpose(2, 0, 1).astype(np.float64) for i in images], axis=0)
    np.testing.assert_allclose(nbdl.nd.load(path)["mean_img"].asnumpy(), mean, rtol=1e-6)
    data = epoch(it)[0][0]
    np.testing.assert_allclose(data, np.stack([i.transpose(2, 0, 1) for i in images]) - mean,
                               atol=1e-4)
    again = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4, mean_img=path)
    np.testing.assert_array_equal(epoch(again)[0][0], data)
    with pytest.raises(nbdl.ShapeError, match="must hold one array of shape"):
        ImageRecordIter(path_imgrec=rec, data_shape=(3, 6, 6), batch_size=4, mean_img=path)


def test_bad_arguments(tmp_path):
    rec, idx, _, _ = write_rec(tmp_path, n=3)
    ok = dict(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="unknown argument 'data_shapes'"):
        ImageRecordIter(**ok, data_shapes=(3, 8, 8))
    with pytest.raises(nbdl.ArgumentError, match="max_rotate_angle=10 is not implemented"):
        ImageRecordIter(**ok, max_rotate_angle=10)
    ImageRecordIter(**ok, max_rotate_angle=0, verbose=False, prefetch_buffer=2)  # defaults: fine
    with pytest.raises(nbdl.ArgumentError, match="data_shape must be"):
        ImageRecordIter(**dict(ok, data_shape=(2, 8, 8)))
    with pytest.raises(nbdl.ArgumentError, match="inter_method 2 is not implemented"):
        ImageRecordIter(**ok, inter_method=2)
    with pytest.raises(nbdl.ArgumentError, match="part_index must be < num_parts"):
        ImageRecordIter(**ok, num_parts=2, part_index=2)
    with pytest.raises(nbdl.ArgumentError, match="is not a file or directory"):
        ImageRecordIter(**dict(ok, path_imgrec=str(tmp_path / "none.rec")))
    with pytest.raises(nbdl.ShapeError, match="batch_size 7 needs more than the 3 images"):
        next(ImageRecordIter(**dict(ok, batch_size=7)))
    with pytest.warns(UserWarning, match="no last_batch_handle"):
        ImageRecordIter(**ok, last_batch_handle="pad")


def test_the_alias_has_it_as_mxnet_names_it():
    nbdl.alias_mxnet()
    import mxnet as mx
    assert mx.io.ImageRecordIter is ImageRecordIter
    assert mx.io.ImageRecordUInt8Iter is ImageRecordUInt8Iter
