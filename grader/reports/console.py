"""The terminal: one place that decides colour, width and live progress, on rich.

Every command writes to the terminal through a `Console` from `stdout()` or
`stderr()`, so they all follow the same rules:

- colour only on a terminal, never with `--no-color` (`no_color=True`) or when
  the `NO_COLOR` environment variable is set and not empty (no-color.org);
  `TERM=dumb` gets neither colour nor live display;
- the width is the terminal's (rich reads it, and `COLUMNS` when set; 80 when
  the output is a file or a pipe);
- student text is printed as it is: rich markup, highlighting and emoji codes
  are off, so a `[/b]` or `:smile:` in a message is not interpreted.

`Progress` counts finished items: a live bar (with each finished item's line
printed above it, and what is running now with the time its limit leaves) on a
terminal, one plain `[i/N] line` per finished item when the output is a file or a
pipe (no carriage return, no redrawing: a CI log reads line by line), and nothing
with `--quiet`. It may be advanced from several threads (the engine reports each
result from its grading thread). `grade`, `grade verify` and `grade batch` use it.

    out = console.stdout(no_color=args.no_color)
    with console.Progress(len(specs), out, unit="file", quiet=args.quiet) as progress:
        report = engine.grade(specs, submission, options,
                              lambda i, n, r: progress.advance(Text.from_ansi(terminal.done_line(r, ...))))
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import rich.progress
from rich.console import Console
from rich.text import Text

from grader.reports import controls


def _console(*, stderr: bool, no_color: bool) -> Console:
    # file=None: rich writes to the current sys.stdout/sys.stderr at each write, so a
    # redirection made later (pytest's capture, contextlib.redirect_stdout) still works.
    return Console(
        stderr=stderr,
        no_color=True if no_color else None,  # None: rich reads NO_COLOR
        markup=False,
        highlight=False,
        emoji=False,
    )


def stdout(*, no_color: bool = False) -> Console:
    """The console on standard output (reports, results)."""
    return _console(stderr=False, no_color=no_color)


def stderr(*, no_color: bool = False) -> Console:
    """The console on standard error (progress and errors of commands whose stdout is data)."""
    return _console(stderr=True, no_color=no_color)


def has_color(console: Console) -> bool:
    """Whether text for `console` may carry colour (for reports that paint their own text)."""
    return console.color_system is not None and not console.no_color


def is_live(console: Console) -> bool:
    """Whether `console` can redraw in place (a terminal that is not `TERM=dumb`)."""
    return console.is_terminal and not console.is_dumb_terminal


class _Running(rich.progress.ProgressColumn):
    """The items being worked on now, each with the time its limit leaves (redrawn live)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self._progress = progress

    def render(self, task: rich.progress.Task) -> Text:
        return Text(self._progress.running_text())


class Progress:
    """`total` items, advanced once per finished item with the line that describes it.

    `start(name, limit_s)` and `advance` tell it what is running: on a live terminal the
    bar names each item being worked on and the time its limit leaves ("03_jit 2:41 left").

    A context manager: the live bar is drawn from `__enter__` to `__exit__` and
    removed at the end (the finished lines stay). A `line` given as `str` is plain
    text, shown as it is with its control characters made visible
    (`controls.visible`: a student's folder name cannot drive the terminal); a line
    with our own colours is a `Text` (`Text.from_ansi(terminal.done_line(result,
    color=True))`), kept on a colour terminal and dropped otherwise.
    """

    def __init__(
        self,
        total: int,
        console: Console,
        *,
        description: str = "grading",
        unit: str = "item",
        quiet: bool = False,
    ) -> None:
        self.total, self.console, self.quiet = total, console, quiet
        self.done = 0
        self._lock = threading.Lock()
        self._running: dict[str, float] = {}  # item -> when its limit ends (monotonic)
        self._bar: rich.progress.Progress | None = None
        self._task: rich.progress.TaskID | None = None
        if not quiet and is_live(console):
            self._bar = rich.progress.Progress(
                rich.progress.SpinnerColumn(),
                rich.progress.TextColumn("{task.description}"),
                rich.progress.BarColumn(),
                rich.progress.MofNCompleteColumn(),
                rich.progress.TextColumn(unit + ("s" if total != 1 else "")),
                rich.progress.TimeElapsedColumn(),
                _Running(self),
                console=console,
                transient=True,
            )
            self._task = self._bar.add_task(description, total=total)

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self, name: str, limit_s: float) -> None:
        """`name` is being worked on now, and must be done within `limit_s` seconds."""
        with self._lock:
            self._running[name] = time.monotonic() + limit_s

    def running_text(self) -> str:
        """What is running now: "03_jit 2:41 left, 08_mlp 3:55 left" ("" for nothing)."""
        now = time.monotonic()
        with self._lock:
            running = sorted(self._running.items(), key=lambda kv: kv[1])
        parts = []
        for name, ends in running[:3]:
            left = max(0, int(ends - now))
            parts.append(f"{controls.visible(name)} {left // 60}:{left % 60:02d} left")
        more = len(running) - 3
        return ", ".join(parts) + (f" (+{more})" if more > 0 else "")

    def advance(self, line: str | Text, name: str = "") -> None:
        """One more item finished (`name`, when it was `start`ed); `line` says which and how
        it went."""
        shown = Text(controls.visible(line)) if isinstance(line, str) else line
        with self._lock:
            self._running.pop(name, None)
            self.done += 1
            if self.quiet:
                return
            if self._bar is not None and self._task is not None:
                self._bar.console.print(shown, soft_wrap=True)
                self._bar.advance(self._task)
                return
            width = len(str(self.total))
            self.console.print(
                Text.assemble(f"[{self.done:>{width}}/{self.total}] ", shown), soft_wrap=True
            )

    def finish(self, name: str) -> None:
        """`name` (`start`ed) is no longer being worked on, though no item is finished: a
        part of one (`grade batch`: one lesson file of a student)."""
        with self._lock:
            self._running.pop(name, None)

    def note(self, line: str | Text) -> None:
        """Say `line` (above the live bar, or as a plain line), counting nothing: a phase
        done (`grade verify`: "solutions run 1: 288/288"). Nothing with `quiet`."""
        shown = Text(controls.visible(line)) if isinstance(line, str) else line
        with self._lock:
            if self.quiet:
                return
            where = self._bar.console if self._bar is not None else self.console
            where.print(shown, soft_wrap=True)

    def close(self) -> None:
        """Remove the live bar (idempotent); `__exit__` calls it."""
        if self._bar is not None:
            self._bar.stop()
