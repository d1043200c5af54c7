"""reports/console: the rules every command's terminal output follows (colour, live display,
progress) when the output is not a terminal. The terminal itself: tests/test_terminal_pty.py."""

from __future__ import annotations

import io
import threading

import pytest
from rich.console import Console
from rich.text import Text

from grader.reports import console


def test_colour_follows_the_terminal_no_color_and_the_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    assert not console.has_color(console.stdout())  # pytest captures: not a terminal
    assert not console.is_live(console.stderr())
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: behave as a terminal
    assert console.has_color(console.stdout()) and console.has_color(console.stderr())
    assert not console.has_color(console.stdout(no_color=True))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not console.has_color(console.stdout()) and not console.has_color(console.stderr())
    monkeypatch.setenv("NO_COLOR", "")  # no-color.org: present but empty means nothing
    assert console.has_color(console.stdout())


def test_student_text_is_printed_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    console.stdout().print("[bold]x[/bold] :smile: [/b] 1e-3 0x1F")
    assert out.getvalue() == "[bold]x[/bold] :smile: [/b] 1e-3 0x1F\n"


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, markup=False, highlight=False, width=40), out


def test_progress_off_a_terminal_is_one_numbered_line_per_item_without_escapes() -> None:
    target, out = plain_console()
    with console.Progress(12, target, unit="file") as progress:
        progress.advance(Text.from_ansi("\x1b[32mPASS\x1b[0m  01_arrays (1.0 s)"))
        progress.advance("FAIL  " + "a long line that is not wrapped at forty columns " * 2)
    lines = out.getvalue().splitlines()
    assert lines[0] == "[ 1/12] PASS  01_arrays (1.0 s)"  # colour codes dropped off a terminal
    assert lines[1].startswith("[ 2/12] FAIL  a long line") and len(lines) == 2


def test_progress_with_quiet_prints_nothing_but_counts() -> None:
    target, out = plain_console()
    with console.Progress(2, target, quiet=True) as progress:
        progress.advance("one")
        progress.advance("two")
    assert out.getvalue() == "" and progress.done == 2


def test_progress_counts_items_finished_on_several_threads_once_each() -> None:
    target, out = plain_console()
    with console.Progress(100, target) as progress:
        threads = [
            threading.Thread(target=lambda: [progress.advance("x") for _ in range(25)])
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    counts = [line.split("]")[0] for line in out.getvalue().splitlines()]
    assert sorted(counts) == sorted(f"[{i:>3}/100" for i in range(1, 101))
