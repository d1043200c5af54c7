"""`grader.course.lock`: the course's lock, made offline from the installed environment."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from grader.course import lock


def own(*lines: str):  # type: ignore[no-untyped-def]
    def requires(extras: Sequence[str]) -> list[Requirement]:
        return [Requirement(line) for line in lines]

    return requires


def test_every_requirement_is_pinned_at_its_installed_version_transitively() -> None:
    pins = lock.closure(own=own("jinja2>=3", "nothing-here>=1; python_version < '3'"))
    assert pins == {
        "jinja2": metadata.version("jinja2"),
        "markupsafe": metadata.version("markupsafe"),  # what jinja2 requires
        "setuptools": metadata.version("setuptools"),  # builds the grader
    }
    grader = lock.closure(("frameworks",))  # the installed grader's own metadata
    assert "jax-lesson-grader" not in grader  # installed from its source, not pinned
    assert {"jax", "jaxlib", "numpy", "flax", "equinox", "packaging"} <= set(grader)
    assert not {"dask", "mypy", "ruff", "libcst"} & set(grader)


@pytest.mark.parametrize(
    ("requirement", "said"),
    [
        ("no-such-distribution>=1", "no-such-distribution>=1 (required by jax-lesson-grader) is not installed"),
        ("jinja2<1", f"jinja2<1 (required by jax-lesson-grader): {metadata.version('jinja2')} is installed"),
    ],
)  # fmt: skip
def test_what_the_environment_lacks_cannot_be_pinned(requirement: str, said: str) -> None:
    with pytest.raises(lock.LockError, match="cannot be pinned") as caught:
        lock.closure(own=own(requirement))
    assert said in str(caught.value)


def test_an_unknown_extra_is_refused() -> None:
    with pytest.raises(lock.LockError, match="no extra named gpu"):
        lock.closure(("gpu",))


def test_a_wheelhouse_gives_every_pin_its_hashes_or_names_what_it_lacks(tmp_path: Path) -> None:
    requires = own("jinja2")
    pins = lock.closure(own=requires)
    house = tmp_path / "wheels"
    house.mkdir()
    digests = {}
    for name, version in pins.items():
        wheel = house / f"{name}-{version}-py3-none-any.whl"
        wheel.write_bytes(f"{name} {version}".encode())
        digests[name] = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (house / "jinja2-0.1-py3-none-any.whl").write_bytes(b"another version: not pinned")
    made = lock.generate(wheelhouse=house, own=requires)
    assert made.hashed
    text = made.text()
    for name, version in pins.items():
        assert f"{name}=={version} \\\n    --hash=sha256:{digests[name]}" in text
    assert "--hash" in text and text.count("--hash=") == len(pins)
    read = lock.read_text(text)
    assert read.pins == pins and read.python == lock.python_version()
    (house / f"markupsafe-{pins['markupsafe']}-py3-none-any.whl").unlink()
    with pytest.raises(lock.LockError, match=f"has no wheel of markupsafe=={pins['markupsafe']}"):
        lock.generate(wheelhouse=house, own=requires)


def test_without_a_wheelhouse_the_lock_says_it_pins_versions_only() -> None:
    text = lock.generate(own=own("jinja2")).text()
    assert "# hashes: versions only" in text and "--hash" not in text
    assert f"# python: {lock.python_version()}\n" in text


def test_a_committed_lock_is_used_as_it_is_and_a_loose_one_refused(tmp_path: Path) -> None:
    committed = "# python: 3.11\njinja2==3.1.4 \\\n    --hash=sha256:abc\nmarkupsafe==2.1.5\n"
    (tmp_path / lock.LOCK_FILE).write_text(committed)
    read, said = lock.for_course(tmp_path)
    assert read.text == committed and read.python == "3.11"
    assert read.pins == {"jinja2": "3.1.4", "markupsafe": "2.1.5"}
    assert "the course's" in said
    (tmp_path / lock.LOCK_FILE).write_text("# python: 3.11\njinja2>=3\n")
    with pytest.raises(lock.LockError, match="not pinned"):
        lock.for_course(tmp_path)
    (tmp_path / lock.LOCK_FILE).write_text("jinja2==3.1.4\n")
    with pytest.raises(lock.LockError, match="which Python it is for"):
        lock.for_course(tmp_path)
