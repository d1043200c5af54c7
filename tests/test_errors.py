"""One root for the grader's own errors (`grader.errors.GraderError`): every
error its user must fix derives from it, and `grade` and each command turn one into one
line, `grade[ COMMAND]: error: MESSAGE`, exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalog, cli, grading, ladder, settings
from grader.batch import export
from grader.batch import run as batch_run
from grader.commands import shared
from grader.course import assign, gradescope_bundle, lock, new, public_suite, release, tree
from grader.errors import GraderError
from grader.mutate import campaign
from grader.notebooks import convert
from grader.runner import policy, submission
from grader.watch import session

USER_ERRORS = (
    shared.UsageError,
    submission.SubmissionError,
    grading.SelectionError,
    catalog.CatalogError,
    lock.LockError,
    release.ReleaseError,
    public_suite.PublicSuiteError,
    tree.TreeError,
    assign.MarkerError,
    gradescope_bundle.BundleError,
    new.NewError,
    export.ExportError,
    batch_run.BatchError,
    settings.SettingError,
    ladder.NoSuchCheck,
    ladder.NothingGraded,
    policy.IsolationUnavailable,
    campaign.CampaignError,
    convert.CannotConvert,
    session.CannotWatch,
)


@pytest.mark.parametrize("error", USER_ERRORS, ids=lambda e: e.__name__)
def test_every_error_of_the_grader_s_user_is_a_grader_error(error: type[Exception]) -> None:
    assert issubclass(error, GraderError)


def test_errors_that_were_value_errors_still_are() -> None:
    for error in (settings.SettingError, ladder.NoSuchCheck, ladder.NothingGraded):
        assert issubclass(error, ValueError)


def test_a_command_s_error_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["hint", "03_jit"]) == 2  # nothing graded here: ladder.NothingGraded
    err = capsys.readouterr().err
    assert err.startswith("grade hint: error: no grading of 03_jit") and err.count("\n") == 1


def test_any_grader_error_a_command_raises_is_said_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One the command never named (a suite the catalog cannot read) reads as the others."""

    def unreadable(*_: object) -> None:
        raise catalog.CatalogError("test_03_jit.py: a check without points")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ladder, "reveal", unreadable)
    assert cli.main(["hint", "03_jit"]) == 2
    assert capsys.readouterr().err == "grade hint: error: test_03_jit.py: a check without points\n"


def test_grade_itself_says_its_errors_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "01_arrays.py").write_text("")
    code = cli.main([str(tmp_path), "--only", "99_nope", "--no-html"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("grade: error: --only: no lesson file named 99_nope")


def test_an_error_that_is_not_the_grader_s_is_not_swallowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise KeyError("a bug")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ladder, "reveal", broken)
    with pytest.raises(KeyError):
        cli.main(["hint", "03_jit"])
