"""Gates: a property check stands on the value checks it names (`@check(requires=...)`,
`gate.require(...)` in one case of a check), and runs only once they passed in full.

Pure functions: the order a file's checks run in (`requirements_first`) and whether one
required check lets another stand on it (`closed_by`); `Gate` is the `gate` fixture.

A required check whose observation got no credit (the student's module can tamper with
what the sandbox observes: `grader.sandbox.source_screen`) closes the gate without saying the
values are wrong: it stopped at the refusal, so nothing is known of them. It does not open
the gate either: a module could otherwise add a refused construct to wrong code to have
the checks standing on it judged, which its honest twin does not get.

A required check that ended in a grader error (its suite's own exception,
`grader.plugin.blame`) opens the gate: the grader's bug is not the student's, and the
checks standing on it are judged as if it had passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pytest

from grader.authoring import MARKER
from grader.protocol.failure import CheckFailure


class GateClosed(CheckFailure):
    """A check (or one case of it) stands on a value check that did not pass."""

    def __init__(
        self, required: str, required_name: str, *, not_implemented: bool, unjudged: str = ""
    ) -> None:
        """`unjudged`: why the required check has no verdict (it ran out of time, its process
        stopped), when that is why: then nothing is said of the values."""
        self.required, self.not_implemented = required, not_implemented
        if unjudged:
            super().__init__(
                "this property is judged once the values are right",
                expected=f"a verdict on '{required_name}' first",
                observed=f"'{required_name}' could not be judged ({unjudged})",
                cause=f"not judged: see '{required_name}' first; nothing is known yet about "
                "the values",
            )
            return
        super().__init__(
            "this property is judged once the values are right",
            expected=f"the check '{required_name}' passed first",
            observed="it did not pass" + (" (not implemented yet)" if not_implemented else ""),
            # Where to look, not how to solve it: said with the failure, not held back as a fix.
            cause=f"values are wrong: fix the values first: see '{required_name}'. A property "
            "(compiling under jit, purity, tracing once, using a lax primitive...) earns points "
            "only for a function that computes the right values",
        )


class Gate:
    """The `gate` fixture: `gate.require("test_x_values")` in one case of a check."""

    def __init__(
        self, require: Callable[[pytest.Item, Sequence[str]], None], item: pytest.Item
    ) -> None:
        self._require, self._item = require, item

    def require(self, *check_ids: str) -> None:
        __tracebackhide__ = True
        self._require(self._item, check_ids)


@dataclass(frozen=True)
class Earlier:
    """What this judge knows of an earlier judge of the same file (a rerun in a fresh
    sandbox, `grader.runner.engine.grade_one`): the checks it runs again (`only`; empty:
    all), those that passed then, and those that had no verdict then."""

    only: frozenset[str] = frozenset()
    passed: frozenset[str] = frozenset()
    unjudged: frozenset[str] = frozenset()


FIRST_RUN = Earlier()
"""A file's first judge: no earlier one to know of."""

UNJUDGED = {"timeout": "it ran out of time", "error": "it could not run"}
"""Why a required check that ended so has no verdict on the values."""

REFUSED = "the grader gave no credit for its observation of your module: see its message"
"""Why a required check whose observation was refused (`client.ObservationRefused`) has
no verdict on the values: it stopped before judging them."""


class Verdict(Protocol):
    """What a gate reads of a check's verdict (`grader.plugin.outcomes.Outcome`)."""

    @property
    def status(self) -> str: ...
    @property
    def full_marks(self) -> bool: ...
    @property
    def grader_error(self) -> bool: ...
    @property
    def refused(self) -> bool: ...
    @property
    def not_implemented(self) -> bool: ...


def closed_by(
    required: str, name: str, outcome: Verdict | None, earlier: Earlier = FIRST_RUN
) -> GateClosed | None:
    """The closed gate of the collected check `required` (its name in words: `name`), or
    None when it lets others stand on it: it passed in full, here (`outcome`) or earlier.
    A check this judge does not run again closes the gate unless it passed earlier."""
    if required in earlier.passed:
        return None
    if outcome is None and earlier.only and required not in earlier.only:
        why = "it could not run" if required in earlier.unjudged else ""
        return GateClosed(required, name, not_implemented=False, unjudged=why)
    if outcome is None:
        raise pytest.UsageError(f"a check requires {required!r}, which has not run yet")
    if outcome.full_marks or outcome.grader_error:  # the suite's own error judged nothing
        return None
    if outcome.refused:
        return GateClosed(required, name, not_implemented=False, unjudged=REFUSED)
    return GateClosed(
        required,
        name,
        not_implemented=outcome.not_implemented,
        unjudged=UNJUDGED.get(outcome.status, ""),
    )


def declared(item: pytest.Item) -> dict[str, Any]:
    """What the check's `@check(...)` says (an unmarked test says nothing)."""
    mark = item.get_closest_marker(MARKER)
    return dict(mark.kwargs) if mark is not None else {}


def check_name(item: pytest.Item) -> str:
    """The check's name in words (its test's name when it has none)."""
    return str(declared(item).get("name", item.name))


def requires(item: pytest.Item) -> tuple[str, ...]:
    """The ids of the checks `item` stands on."""
    return tuple(declared(item).get("requires", ()))


def requirements_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` in their order, except that a check runs after the checks it requires,
    and checks that ask for the `gate` fixture (gated case by case) run last."""
    by_name = {item.name: item for item in items}
    ordered: list[pytest.Item] = []
    placed: set[str] = set()

    def place(item: pytest.Item, visiting: frozenset[str]) -> None:
        if item.name in placed or item.name in visiting:
            return
        for required in requires(item):
            if required in by_name:
                place(by_name[required], visiting | {item.name})
        placed.add(item.name)
        ordered.append(item)

    gated = [item for item in items if "gate" in getattr(item, "fixturenames", ())]
    for item in [item for item in items if item not in gated] + gated:
        place(item, frozenset())
    return ordered
