"""purity's snapshot of a module's globals follows a cycle once: a module-level
`logging.getLogger(__name__)` (whose manager holds every logger, each holding the manager)
is an ordinary habit, not a reason for the probe to exceed the recursion limit."""

from __future__ import annotations

import logging
import types

from grader.probes import purity


def _module(**globals_: object) -> types.ModuleType:
    module = types.ModuleType("lesson")
    vars(module).update(globals_)
    return module


def test_a_module_logger_is_compared_without_end() -> None:
    module = _module(log=logging.getLogger("lesson"), history=[1])
    before = purity._globals_snapshot(module)
    assert purity._globals_change(module, before) is None


def test_a_change_beside_the_logger_is_still_seen() -> None:
    module = _module(log=logging.getLogger("lesson"), history=[1])
    before = purity._globals_snapshot(module)
    module.history.append(2)  # type: ignore[attr-defined]
    assert purity._globals_change(module, before) == "the global `history` grew from 1 to 2 items"


def test_a_change_inside_a_cycle_is_still_seen() -> None:
    node: dict[str, object] = {"value": 1}
    node["self"] = node
    module = _module(node=node)
    before = purity._globals_snapshot(module)
    node["value"] = 2
    found = purity._globals_change(module, before)
    assert found is not None and "['value']" in found
