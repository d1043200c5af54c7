"""grader.data: digits split, MNIST from IDX / npz files, network only when allowed."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grader import data

IDX_NAMES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}


def idx_bytes(array: np.ndarray) -> bytes:
    """The IDX encoding of a uint8 array: 0, 0, type 0x08, ndim, big-endian dims, data."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def small_mnist(n_train: int = 12, n_test: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, n_train, dtype=np.uint8),
        "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, n_test, dtype=np.uint8),
    }


def write_idx_folder(folder: Path, arrays: dict[str, np.ndarray], *, gz: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, name in IDX_NAMES.items():
        raw = idx_bytes(arrays[split])
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(raw))
        else:
            (folder / name).write_bytes(raw)
    return folder


def assert_lesson_format(loaded: data.Dataset, arrays: dict[str, np.ndarray]) -> None:
    x_train, y_train, x_test, y_test = loaded
    assert x_train.dtype == np.float32 and x_test.dtype == np.float32
    assert y_train.dtype == np.int32 and y_test.dtype == np.int32
    assert x_train.shape == (len(arrays["y_train"]), 784)
    assert x_test.shape == (len(arrays["y_test"]), 784)
    np.testing.assert_allclose(x_train, arrays["x_train"].reshape(-1, 784) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y_test, arrays["y_test"])


# -- digits --------------------------------------------------------------------
def test_digits_split_is_the_specified_one() -> None:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x_train, y_train, x_test, y_test = data.load_digits()
    assert x_train.shape == (1437, 64) and x_test.shape == (360, 64)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int32
    assert float(x_train.min()) == 0.0 and float(x_train.max()) == 1.0
    bunch = load_digits()
    _, ex_test, _, ey_test = train_test_split(
        bunch.data / 16.0, bunch.target, test_size=0.2, stratify=bunch.target, random_state=0
    )
    np.testing.assert_allclose(x_test, ex_test, rtol=1e-6)
    np.testing.assert_array_equal(y_test, ey_test)
    # stratified: every class in both parts, in proportion
    assert np.bincount(y_test).min() >= 35


def test_load_data_defaults_to_digits() -> None:
    default = data.load_data()
    digits = data.load_digits()
    for a, b in zip(default, digits, strict=True):
        np.testing.assert_array_equal(a, b)


def test_digits_takes_no_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="source='mnist'"):
        data.load_data("digits", path=tmp_path)


def test_unknown_source_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="digits, mnist"):
        data.load_data("cifar")


# -- MNIST from files ----------------------------------------------------------
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_mnist_from_idx_folder(tmp_path: Path, gz: bool) -> None:
    arrays = small_mnist()
    folder = write_idx_folder(tmp_path / "mnist", arrays, gz=gz)
    assert_lesson_format(data.load_data("mnist", path=folder), arrays)


def test_mnist_idx_files_with_dotted_names(tmp_path: Path) -> None:
    arrays = small_mnist()
    for split, name in IDX_NAMES.items():
        (tmp_path / name.replace("-idx", ".idx")).write_bytes(idx_bytes(arrays[split]))
    assert_lesson_format(data.load_mnist(tmp_path), arrays)


def test_mnist_from_npz_file(tmp_path: Path) -> None:
    arrays = small_mnist()
    file = tmp_path / "digits-like.npz"
    np.savez(file, **arrays)
    assert_lesson_format(data.load_mnist(file), arrays)


def test_mnist_npz_already_scaled_is_kept(tmp_path: Path) -> None:
    arrays = small_mnist()
    scaled = {k: (v / 255.0 if k.startswith("x") else v) for k, v in arrays.items()}
    file = tmp_path / "scaled.npz"
    np.savez(file, **scaled)
    assert_lesson_format(data.load_mnist(file), arrays)


def test_mnist_npz_in_a_folder(tmp_path: Path) -> None:
    arrays = small_mnist()
    np.savez(tmp_path / "mnist.npz", **arrays)
    assert_lesson_format(data.load_mnist(tmp_path), arrays)


def test_read_idx_keeps_type_and_shape(tmp_path: Path) -> None:
    file = tmp_path / "x.idx"
    values = np.arange(24, dtype=">i4").reshape(2, 3, 4)
    file.write_bytes(bytes([0, 0, 0x0C, 3]) + struct.pack(">3I", 2, 3, 4) + values.tobytes())
    read = data.read_idx(file)
    assert read.shape == (2, 3, 4)
    np.testing.assert_array_equal(read, np.arange(24).reshape(2, 3, 4))


# -- errors name the path and what to do -----------------------------------------
def test_missing_path_without_network_says_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as info:
        data.load_mnist(missing, cache_dir=tmp_path / "cache")
    text = str(info.value)
    assert str(missing) in text
    assert "allow_network=True" in text and "train-images-idx3-ubyte" in text
    assert "source='digits'" in text


def test_no_path_no_cache_no_network(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        data.load_data("mnist", cache_dir=tmp_path)
    assert str(tmp_path / data.CACHE_FILE) in str(info.value)
    assert "allow_network=False" in str(info.value)


def test_incomplete_folder_names_the_missing_files(tmp_path: Path) -> None:
    arrays = small_mnist()
    write_idx_folder(tmp_path, arrays)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError) as info:
        data.load_mnist(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert "missing t10k-labels-idx1-ubyte" in str(info.value)


def test_truncated_idx_names_the_file(tmp_path: Path) -> None:
    arrays = small_mnist()
    write_idx_folder(tmp_path, arrays)
    bad = tmp_path / "train-images-idx3-ubyte"
    bad.write_bytes(bad.read_bytes()[:-10])
    with pytest.raises(ValueError, match="truncated") as info:
        data.load_mnist(tmp_path)
    assert str(bad) in str(info.value)


def test_not_an_idx_file(tmp_path: Path) -> None:
    bad = tmp_path / "x"
    bad.write_bytes(b"<html>not found</html>")
    with pytest.raises(ValueError, match="not an IDX file") as info:
        data.read_idx(bad)
    assert str(bad) in str(info.value)


def test_corrupt_gzip_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.gz"
    bad.write_bytes(gzip.compress(b"\0" * 100)[:20])
    with pytest.raises(ValueError, match="gzip") as info:
        data.read_idx(bad)
    assert str(bad) in str(info.value)


def test_corrupt_npz_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "mnist.npz"
    bad.write_bytes(b"PK\x03\x04 definitely not a zip archive")
    with pytest.raises(ValueError, match=r"not a readable \.npz") as info:
        data.load_mnist(bad)
    assert str(bad) in str(info.value)


def test_npz_with_wrong_keys(tmp_path: Path) -> None:
    file = tmp_path / "other.npz"
    np.savez(file, images=np.zeros((2, 784)), labels=np.zeros(2))
    with pytest.raises(ValueError, match="lacks the arrays x_train, y_train") as info:
        data.load_mnist(file)
    assert "images, labels" in str(info.value)


def test_mismatched_rows_and_labels(tmp_path: Path) -> None:
    arrays = small_mnist()
    arrays["y_train"] = arrays["y_train"][:-1]
    file = tmp_path / "short.npz"
    np.savez(file, **arrays)
    with pytest.raises(ValueError, match="12 rows but y_train has 11 labels"):
        data.load_mnist(file)


# -- the network, only when allowed --------------------------------------------------
class FakeOpenML:
    """Stands in for sklearn's fetch_openml (no network in tests)."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y, self.calls = x, y, []  # type: ignore[var-annotated]

    def __call__(self, name: str, **kwargs: Any) -> SimpleNamespace:
        self.calls.append((name, kwargs))
        return SimpleNamespace(data=self.x, target=self.y)


def test_network_fetch_only_when_allowed_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sklearn import datasets

    rng = np.random.default_rng(1)
    fake = FakeOpenML(
        rng.integers(0, 256, (9, 784)).astype(np.float64),
        np.array([str(d) for d in rng.integers(0, 10, 9)], dtype=object),
    )
    monkeypatch.setattr(datasets, "fetch_openml", fake)
    monkeypatch.setattr(data, "OPENML_TRAIN_SIZE", 6)
    cache = tmp_path / "cache"

    with pytest.raises(FileNotFoundError):
        data.load_data("mnist", cache_dir=cache)
    assert fake.calls == []

    x_train, _, x_test, y_test = data.load_data("mnist", allow_network=True, cache_dir=cache)
    assert [c[0] for c in fake.calls] == ["mnist_784"]
    assert fake.calls[0][1]["data_home"] == str(cache)
    assert x_train.shape == (6, 784) and x_test.shape == (3, 784)
    np.testing.assert_array_equal(y_test, fake.y[6:].astype(int))
    assert (cache / data.CACHE_FILE).is_file()

    again = data.load_data("mnist", cache_dir=cache)  # from the cache, no network needed
    assert len(fake.calls) == 1
    np.testing.assert_array_equal(again[0], x_train)
