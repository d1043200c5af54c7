"""The root of the grader's own errors: what it says to whoever runs it, instead of a traceback.

Each module keeps its error where its concept lives (`catalog.CatalogError`,
`course.release.ReleaseError`, `runner.policy.IsolationUnavailable`, ...), and every one of
them is a `GraderError`: its message names what was wrong and what to do. The commands do
not translate them one by one: `grader.cli.main` turns any `GraderError` a command raises
into one line, `grade COMMAND: error: MESSAGE`, and exit code 2 (`grade` itself says
`grade: error: MESSAGE`).

Not here: what student code raises (`grader.sandbox.client.StudentError`), a check's
verdict (`grader.protocol.failure.CheckFailure`), and the protocol's refusals of what a
process sent (`grader.protocol`): those are handled where they arise, never shown as an
error of the grader's user.
"""

from __future__ import annotations


class GraderError(Exception):
    """Something the grader's user must fix: the message says what, and how."""
