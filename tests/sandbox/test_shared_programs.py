"""The store of programs a batch shares (`grader.sandbox.shared_programs`): an entry comes out
only for its own key, unchanged; a store changed after its digest was taken loads nothing;
the compiled programs are not in the file in the clear."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import shared_programs

ENTRIES = [
    ("jit_empty-" + "c" * 64, b""),
    ("jit_forward-" + "a" * 64, b"\x7fELF compiled forward " * 50),
    ("jit_loss_fn-" + "b" * 64, b"\x7fELF compiled loss " * 80),
]


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    shared_programs.load("", "")  # nothing loaded: what the next test expects


def test_each_entry_comes_out_for_its_key_alone(tmp_path: Path) -> None:
    path = tmp_path / "programs"
    sha256 = shared_programs.write(ENTRIES, str(path))
    assert sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert shared_programs.load(str(path), sha256) == len(ENTRIES)
    assert shared_programs.loaded()
    for key, value in ENTRIES:
        assert shared_programs.get(key) == value
    assert shared_programs.get("jit_forward-" + "d" * 64) is None
    assert shared_programs.get(ENTRIES[1][0] + " ") is None


def test_the_file_holds_neither_keys_nor_programs_in_the_clear(tmp_path: Path) -> None:
    path = tmp_path / "programs"
    shared_programs.write(ENTRIES, str(path))
    data = path.read_bytes()
    for key, value in ENTRIES:
        assert key.encode() not in data
        assert not value or value[:16] not in data


def test_a_store_changed_after_its_digest_loads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "programs"
    sha256 = shared_programs.write(ENTRIES, str(path))
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert shared_programs.load(str(path), sha256) == 0
    assert not shared_programs.loaded()
    assert shared_programs.get(ENTRIES[0][0]) is None


def test_a_tampered_entry_whose_file_digest_was_recomputed_is_refused(tmp_path: Path) -> None:
    """The tag over key and value: a changed value does not come out, even from a store
    whose digest was taken after the change."""
    path = tmp_path / "programs"
    shared_programs.write(ENTRIES, str(path))
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # the last entry's last byte (the loss's program)
    path.write_bytes(bytes(data))
    assert shared_programs.load(str(path), hashlib.sha256(data).hexdigest()) == len(ENTRIES)
    assert shared_programs.get(ENTRIES[2][0]) is None
    assert shared_programs.get(ENTRIES[1][0]) == ENTRIES[1][1]


def test_missing_truncated_or_foreign_files_load_nothing(tmp_path: Path) -> None:
    assert shared_programs.load(str(tmp_path / "absent"), "0" * 64) == 0
    path = tmp_path / "programs"
    shared_programs.write(ENTRIES, str(path))
    cut = path.read_bytes()[:-3]
    path.write_bytes(cut)
    assert shared_programs.load(str(path), hashlib.sha256(cut).hexdigest()) == 0
    foreign = b"not a store\n" + cut
    path.write_bytes(foreign)
    assert shared_programs.load(str(path), hashlib.sha256(foreign).hexdigest()) == 0


def test_the_variable_is_forgotten_once_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "programs"
    sha256 = shared_programs.write(ENTRIES, str(path))
    monkeypatch.setenv(shared_programs.ENV, f"{path} {sha256}")
    assert shared_programs.from_environment() == len(ENTRIES)
    import os

    assert shared_programs.ENV not in os.environ
