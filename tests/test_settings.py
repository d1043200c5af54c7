"""grader.settings: the course's `[tool.grade]`, read from the nearest pyproject.toml."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from help_examples import raw_report

from grader import audience, settings


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        ("", "on-request"),
        ("show_fixes = false", "never"),
        ("show_fixes = true", "always"),
        ('show_fixes = "on-request"  # the default', "on-request"),
        ("show_fixes = 'on_request'", "on-request"),
    ],
)
@pytest.mark.parametrize("tomllib", [True, False], ids=["tomllib", "py310"])
def test_show_fixes_is_read_from_the_course_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, setting: str, tomllib: bool
) -> None:
    if not tomllib:
        monkeypatch.setitem(sys.modules, "tomllib", None)  # import fails as on Python 3.10
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "course"\n\n[tool.grade]\n{line}\n\n[tool.other]\nshow_fixes = 1\n'
    )
    (tmp_path / "exercises").mkdir()
    assert settings.show_fixes(tmp_path / "exercises") == setting  # found in a folder above


def test_a_bad_setting_is_an_error_and_grading_reads_it_as_never(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.grade]\nshow_fixes = "sometimes"\n')
    with pytest.raises(settings.SettingError, match="give true, false or"):
        settings.show_fixes(tmp_path)
    shown = audience.for_class(raw_report(), tmp_path)
    assert shown.exercises[0].checks[1].fix == ""
    assert "show_fixes" in capsys.readouterr().err


@pytest.mark.parametrize("tomllib", [True, False], ids=["tomllib", "py310"])
def test_the_release_url_is_read_with_the_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tomllib: bool
) -> None:
    if not tomllib:
        monkeypatch.setitem(sys.modules, "tomllib", None)
    (tmp_path / "exercises").mkdir()
    assert settings.release_url(tmp_path / "exercises") == ""
    url = "git+https://github.com/course/release"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.grade]\nshow_fixes = false\nrelease_url = "{url}"  # recorded\n\n'
        '[tool.other]\nrelease_url = "elsewhere"\n'
    )
    assert settings.release_url(tmp_path / "exercises") == url
    (tmp_path / "pyproject.toml").write_text("[tool.grade]\nrelease_url = 3\n")
    with pytest.raises(settings.SettingError, match="give the URL as a string"):
        settings.release_url(tmp_path)
