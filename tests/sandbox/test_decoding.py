"""A lesson file is read as `python3 lesson.py` reads it: the encoding its
first lines declare (PEP 263), UTF-8 otherwise, and a byte that is not of its encoding is
Python's own SyntaxError, not a file graded as if it ran.

The messages are compared with what the real interpreter says of the same bytes; the
sandbox's loader (`server.import_lesson`) is tried in this process, and the whole path
(`grade` in a subprocess, a real sandbox) in the slow tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import decoding, server

ROOT = Path(__file__).resolve().parents[2]
LATIN1 = "# -*- coding: latin-1 -*-\n"

# bytes a student may save -> the text Python reads (every one runs under `python3`)
READ = {
    "utf-8, accents": ("# café\nNAME = 'Zoë'\n".encode(), "# café\nNAME = 'Zoë'\n"),
    "latin-1 declared": (
        (LATIN1 + "# caf\xe9\nNAME = 'Zo\xeb'\n").encode("latin-1"),
        LATIN1 + "# café\nNAME = 'Zoë'\n",
    ),
    "declared on line 2 (shebang)": (
        b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nNAME = '\xe9'\n",
        "#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nNAME = 'é'\n",
    ),
    "cp1252 declared": (
        b"# coding: cp1252\nQUOTE = '\x93hi\x94'\n",
        "# coding: cp1252\nQUOTE = '“hi”'\n",
    ),
    "utf-8 with a byte order mark": (b"\xef\xbb\xbfNAME = 'caf\xc3\xa9'\n", "NAME = 'café'\n"),
    "windows line endings": (b"x = 1\r\ny = 2\r\n", "x = 1\ny = 2\n"),
}

# bytes `python3` refuses -> the start of its message
REFUSED = {
    "latin-1 comment, no declaration": (
        b"# caf\xe9\nx = 1\n",
        "Non-UTF-8 code starting with '\\xe9'",
    ),
    "latin-1 in a string on line 3": (
        b"x = 1\ny = 2\nz = 'caf\xe9'\n",
        "Non-UTF-8 code starting with '\\xe9' in file lesson_enc.py on line 3,",
    ),
    "declaration on line 3 is too late": (
        b"x = 1\n\n# coding: latin-1\nprint('\xe9')\n",
        "Non-UTF-8 code starting with '\\xe9' in file lesson_enc.py on line 4,",
    ),
    "an unknown encoding": (b"# coding: klingon\nx = 1\n", "encoding problem: klingon"),
    "a byte order mark and latin-1": (
        b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
        "encoding problem: latin-1 with BOM",
    ),
}


@pytest.mark.parametrize("case", sorted(READ))
def test_what_python_runs_is_read_as_python_reads_it(case: str, tmp_path: Path) -> None:
    data, expected = READ[case]
    assert decoding.text(data, "lesson_enc.py") == expected
    (tmp_path / "lesson_enc.py").write_bytes(data)
    ran = subprocess.run(
        [sys.executable, "lesson_enc.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_python_refuses_is_its_syntax_error(case: str, tmp_path: Path) -> None:
    data, start = REFUSED[case]
    with pytest.raises(SyntaxError) as raised:
        decoding.text(data, "lesson_enc.py")
    assert raised.value.msg.startswith(start), raised.value.msg
    assert raised.value.lineno and raised.value.lineno >= 1
    (tmp_path / "lesson_enc.py").write_bytes(data)
    ran = subprocess.run(
        [sys.executable, "lesson_enc.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert ran.returncode == 1
    said = (
        ran.stderr.strip()
        .splitlines()[-1]
        .replace(str(tmp_path / "lesson_enc.py"), "lesson_enc.py")
    )
    if "Non-UTF-8" in start:  # Python's very words, the file named as the grader names it
        assert said == f"SyntaxError: {raised.value.msg}"
    else:  # Python names the codec as it normalises it (iso-8859-1 for latin-1)
        assert said.startswith("SyntaxError: encoding problem: ")


def test_compile_alone_would_have_run_the_undeclared_file() -> None:
    """Why the decoding is ours: `compile(bytes)` (what the import system does) accepts it."""
    data = REFUSED["latin-1 comment, no declaration"][0]
    compile(data, "lesson_enc.py", "exec", dont_inherit=True)  # no error: the hole fixed here
    with pytest.raises(SyntaxError):
        decoding.text(data, "lesson_enc.py")


def _import(tmp_path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    (tmp_path / "lesson_enc.py").write_bytes(data)
    module, exc = server.import_lesson("lesson_enc", str(tmp_path))
    if exc is not None:
        return exc
    assert module is not None
    return module.NAME


def test_the_sandbox_imports_a_declared_latin1_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _import(tmp_path, READ["latin-1 declared"][0], monkeypatch) == "Zoë"
    assert not (tmp_path / "__pycache__").exists()  # no bytecode written beside the file


def test_the_sandbox_refuses_an_undeclared_latin1_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exc = _import(tmp_path, b"# caf\xe9\nNAME = 1\n", monkeypatch)
    assert isinstance(exc, SyntaxError)
    assert str(exc).startswith(
        "Non-UTF-8 code starting with '\\xe9' in file lesson_enc.py on line 1, but no encoding "
        "declared; see https://peps.python.org/pep-0263/ for details (lesson_enc.py, line 1)"
    )


def _grade(folder: Path) -> dict[str, object]:
    out = folder.parent / "results.json"
    subprocess.run(
        [sys.executable, "-m", "grader", str(folder), "--only", "04_vmap", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder.parent,
    )
    results = json.loads(out.read_text())
    exercise: dict[str, object] = results["exercises"][0]
    return exercise


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False])
def test_grade_reads_the_file_as_python_does(tmp_path: Path, declared: bool) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    head = (LATIN1 if declared else "").encode() + "# Zo\xeb's answers\n".encode("latin-1")
    solution = (ROOT / "solutions" / "04_vmap.py").read_bytes()
    (folder / "04_vmap.py").write_bytes(head + solution)
    exercise = _grade(folder)
    if declared:
        assert exercise["status"] == "passed", exercise
        assert exercise["score"] == exercise["max_score"]
    else:
        assert exercise["status"] == "error", exercise
        assert exercise["score"] == 0
        assert (
            "04_vmap.py has a syntax error at line 1: Non-UTF-8 code starting with '\\xeb'"
        ) in str(exercise["message"])


def test_the_judges_screen_parses_a_declared_latin1_file_as_python_does() -> None:
    """The screen (`grader.sandbox.source_screen`) parses the bytes the sandbox sends with
    `ast.parse(bytes)`, which honours the declaration: the Latin-1 file is screened, not
    refused as unparseable; a file that is not Python is."""
    from grader.sandbox import source_screen

    assert source_screen.findings(READ["latin-1 declared"][0]) == []
    assert source_screen.findings(REFUSED["an unknown encoding"][0]) != []


def test_grade_watch_says_so_the_moment_the_file_is_saved(tmp_path: Path) -> None:
    """`grade watch` shows a syntax error without grading (`watch.syntax.syntax_problem`):
    it reads the file as the grading does, so it says what the grading will say."""
    from grader.watch.syntax import syntax_problem

    lesson = tmp_path / "03_jit.py"
    lesson.write_bytes(b"# caf\xe9\nx = 1\n")
    problem = syntax_problem(lesson)
    assert problem is not None and problem.line == 1
    assert problem.message.startswith("Non-UTF-8 code starting with '\\xe9' in file 03_jit.py")
    lesson.write_bytes(LATIN1.encode() + b"# caf\xe9\nx = 1\n")
    assert syntax_problem(lesson) is None
