"""What the judge tells the student: the sentences of a check's failure and of an import
that failed, where the student's line is, and messages cleaned of the grader's folders.

Pure functions of exceptions and values (`source_line` alone reads a file: the lesson's
line a stopped sandbox was at); `grader.plugin.outcomes` picks which one a check gets.
"""

from __future__ import annotations

import os
import re

from grader.explain import explain
from grader.model import SourceLine
from grader.protocol.failure import CAUSE_LABEL, CheckFailure
from grader.sandbox.client import SandboxGone, StudentError

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def scrub(message: str, lesson_dir: str = "") -> str:
    """Messages are deterministic and name the student's files, not the private copy."""
    text = _ADDRESS.sub("", message)
    return text.replace(lesson_dir + os.sep, "") if lesson_dir else text


def short(exc: BaseException, limit: int = 600) -> str:
    """`exc`'s text, stripped, cut at `limit` characters."""
    text = str(exc).strip()
    return text if len(text) <= limit else text[:limit] + " [...]"


def raised(who: str, kind: str, exc: BaseException) -> tuple[str, str]:
    """`<who> raised <kind>: <message>`, with JAX's likely cause when known; and its fix."""
    lines = [f"{who} raised {kind}: {short(exc)}"]
    explained = explain(exc)
    if explained:
        lines.append(f"  {CAUSE_LABEL} {explained.cause}")
    return "\n".join(lines), explained.fix if explained else ""


def error_location(exc: BaseException) -> SourceLine | None:
    """The student's line behind `exc`: from the StudentError it is, or that caused it, or
    the line a check's finding points at (`fail(..., where=...)`)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, CheckFailure) and current.finding.where:
            return SourceLine(*current.finding.where)
        if isinstance(current, StudentError) and current.info.location:
            path, line, code = current.info.location
            return SourceLine(path, line, code)
        current = current.__cause__ or current.__context__
    return None


def student_root_cause(exc: BaseException) -> str | None:
    """`Type|path|line|function` of the student's exception a check's failure was raised
    from (`raise fail(...) from exc`), or None. Only explicit causes count."""
    seen: set[int] = set()
    current: BaseException | None = exc.__cause__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StudentError):
            info = current.info
            if info.location is None or (info.is_a("NotImplementedError") and info.in_student):
                return None
            return root_cause(current)
        current = current.__cause__
    return None


def root_cause(exc: StudentError) -> str | None:
    """`Type|path|line|function` of the student's own exception, or None without a line."""
    info = exc.info
    if info.location is None:
        return None
    path, line, _ = info.location
    return f"{info.type}|{path}|{line}|{info.function}"


def import_message(lesson: str, exc: BaseException) -> str:
    """Why the lesson file `lesson` could not be imported, said to its author."""
    info = exc.info if isinstance(exc, StudentError) else None
    loc = error_location(exc)
    where = f" ({loc.path}, line {loc.line}: {loc.code})" if loc else ""
    if isinstance(exc, SandboxGone):
        return (
            f"{lesson}.py could not be imported: the process importing it stopped ({exc}). "
            "Code at the top level of the file runs on import: keep it to definitions, and never "
            "end the program there (`sys.exit`, `os._exit`, `quit()`)."
        )
    if info is None:
        return str(exc)
    if info.is_a("SyntaxError"):
        what, _, rest = info.message.partition(" (")
        line = re.search(r"line (\d+)\)", rest)
        at = where or (f" at line {line.group(1)}" if line else "")
        return (
            f"{lesson}.py has a syntax error{at}: {what}. "
            "Python could not read the file, so none of its checks ran. Fix the line (look just "
            "before it too) and grade again."
        )
    if info.type == "SystemExit":
        return (
            f"{lesson}.py called sys.exit({info.message or 'None'}) while being imported{where}. A "
            "lesson file must only define functions: move script code under "
            "`if __name__ == '__main__':`."
        )
    if info.type == "FileNotFoundError" and not loc:
        return info.message
    return (
        f"{lesson}.py failed to import{where}: {info.type}: {short(exc)}. None of its "
        f"checks ran. Run `python {lesson}.py` to see the error, fix it and grade again."
    )


def not_started(lesson: str, exc: BaseException) -> str:
    """The sandbox ended before the lesson file `lesson` was read (`SandboxNotStarted`): the
    grader's failure, said as such: none of the student's code ran, no points are counted."""
    return (
        f"grader error: the grader could not start the process that imports {lesson}.py "
        f"({short(exc, 300)}). It ended before reading the file, so none of your code ran and "
        "no points were counted for it. Likely cause: that process runs as a user of its own, "
        "and the grader's installation is closed to that user (its error is in the output "
        "below). Fix, for whoever runs the grader: install it where other users may read "
        "(`chmod o+rx` on the closed folder) or grade at another `--isolation` level, then "
        "grade again."
    )


def suite_error(kind: str, exc: BaseException, suite: str, line: int) -> str:
    """A check's own code (its suite `suite`, at `line`) raised `kind`: the grader's bug,
    said as such (`grader.plugin.blame`): no points are counted for the check either way."""
    return (
        f"grader error: the check's own code raised {kind}: {short(exc, 300)} "
        f"({suite}, line {line}). A bug in the grader's checks, not in your code: no points "
        "were counted for this check either way. Please report it to whoever runs the grader."
    )


def suite_not_loaded(kind: str, exc: BaseException, suite: str, line: int) -> str:
    """The suite `suite` could not be imported or collected (at `line`): none of its checks
    ran, and none counts (`grader.plugin.blame`)."""
    at = f", line {line}" if line else ""
    return (
        f"grader error: the grader's checks for this file could not be loaded ({suite}{at}: "
        f"{kind}: {short(exc, 300)}). A bug in the grader, not in your code: none of this "
        "file's checks ran and no points were counted for them. Please report it to whoever "
        "runs the grader."
    )


def suite_not_collected(nodeid: str) -> str:
    """A suite whose collection failed without an exception the judge saw."""
    return (
        f"grader error: the grader's checks for this file could not be collected ({nodeid}). "
        "A bug in the grader, not in your code: none of this file's checks ran and no points "
        "were counted for them. Please report it to whoever runs the grader."
    )


# -- a check that did not pass ---------------------------------------------------------


def not_called(function: str) -> str:
    return (
        f"not judged: `{function}` stopped the process running your code in an "
        "earlier check of this file (it ran out of time there, or ended the process), so "
        "this check did not call it again. Fix that first: see the check that names it."
    )


def not_run(why: str) -> str:
    return f"not run: the process running your code stopped in an earlier check ({why})"


def called(function: str) -> str:
    """The student function a stopped sandbox was running, in words."""
    return f"`{function}`" if function else "your code"


def wrote_too_much(called: str, exc: BaseException) -> str:
    return (
        f"{called} wrote too much: {exc}, so the process running it was stopped. "
        "Write only what the exercise asks for (a checkpoint takes kilobytes) and "
        "delete temporary files when you are done with them."
    )


def broke_protocol(called: str, detail: str) -> str:
    return (
        f"the process running your code sent the grader something it could not read "
        f"while {called} ran ({detail}), "
        "so it was stopped. Code must not write to the grader's connection."
    )


def stopped(called: str, exc: BaseException) -> str:
    return (
        f"the process running your code stopped while {called} ran ({exc}). Something "
        "in your code ended it (`sys.exit`, `os._exit`, a signal) or it ran out of memory."
    )


def time_limit(share_s: float, wall_s: float, *, share: bool) -> str:
    """The limit that ran out: the check's share of the file's (`share_s` of computing,
    `wall_s` in all), or the file's own."""
    if share:
        return (
            f"this check's share of the time limit ({share_s:g} s of computing, "
            f"{wall_s:g} s in all)"
        )
    return "the time limit for this file"


def stuck_at(path: str, line: int, function: str, code: str) -> str:
    """Where the student's code was when its time ran out (` It was at ...`)."""
    return f" It was at {path}, line {line}, in `{function}`" + (f": `{code}`." if code else ".")


def timed_out(called: str, limit: str, where: str, *, share: bool) -> str:
    return (
        f"{called} was still running when {limit} ran out.{where} Look for a loop that never "
        "ends (a `while` whose condition never changes) or a very slow Python loop over "
        "array elements; `grade --timeout` raises the limit."
        + (" The file's other checks ran in a fresh process." if share else "")
    )


def not_implemented(function: str) -> str:
    where = f"`{function}`" if function else "this function"
    return f"{where} is not implemented yet: it still raises NotImplementedError."


def out_of_memory(kind: str, exc: BaseException) -> str:
    return (
        "ran out of memory: the code tried to allocate more than the grader's memory "
        f"limit ({kind}: {short(exc)})"
    )


def assertion(exc: AssertionError) -> str:
    """pytest's rewritten-assert explanation is for suite authors: its first line only."""
    return short(exc).splitlines()[0] if str(exc) else "assertion failed"


def source_line(path: str, line: int) -> str:
    """The stripped text of `line` in the lesson file `path` (the judge's copy), or ""."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, 1):
                if number == line:
                    return text.strip()[:200]
    except OSError:
        pass
    return ""
