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
printed above it) on a terminal, one plain `[i/N] line` per finished item when
the output is a file or a pipe, and nothing with `--quiet`. It may be advanced
from several threads (the engine reports each result from its grading thread).

    out = console.stdout(no_color=args.no_color)
    with console.Progress(len(specs), out, unit="file", quiet=args.quiet) as progress:
        report = engine.grade(specs, submission, options,
                              lambda i, n, r: progress.advance(terminal.done_line(r, ...)))
"""

from __future__ import annotations

import threading
from types import TracebackType

import rich.progress
from rich.console import Console
from rich.text import Text


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


class Progress:
    """`total` items, advanced once per finished item with the line that describes it.

    A context manager: the live bar is drawn from `__enter__` to `__exit__` and
    removed at the end (the finished lines stay). `line` may carry ANSI colour
    codes (e.g. `terminal.done_line(result, color=True)`); they are kept on a
    colour terminal and are the caller's to leave out otherwise (`has_color`).
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

    def advance(self, line: str) -> None:
        """One more item finished; `line` says which and how it went."""
        with self._lock:
            self.done += 1
            if self.quiet:
                return
            if self._bar is not None and self._task is not None:
                self._bar.console.print(Text.from_ansi(line), soft_wrap=True)
                self._bar.advance(self._task)
                return
            width = len(str(self.total))
            self.console.print(
                Text.from_ansi(f"[{self.done:>{width}}/{self.total}] {line}"), soft_wrap=True
            )

    def close(self) -> None:
        """Remove the live bar (idempotent); `__exit__` calls it."""
        if self._bar is not None:
            self._bar.stop()
