"""Where a loop unrolled: the student's `for` behind the operations that repeat in a
compiled program.

JAX keeps in each operation of the program the Python lines that recorded it (its source
info: the innermost frame first). The judge reads those locations from the module it
parsed, takes the student's line behind most of the repeated operations, and finds the
loop around that line (a `for`, a `while`, a comprehension) in its own copy of the lesson
file, never in anything the sandbox sends. What it finds only points the student at a
line; no verdict rests on it.

Private to the check kinds (`growth`, `primitives`).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import Counter
from collections.abc import Callable, Collection
from typing import Any

from grader.checks import exported
from grader.sandbox import client

# `"path/to/file.py":63:16` inside an MLIR location: the file and line of one frame.
_FRAME = re.compile(r'"([^"]{1,4096}\.py)":(\d{1,7}):')
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)  # fmt: skip
MAX_SOURCE_BYTES = 1 << 20

Line = tuple[str, int, str]
"""(the lesson file's name, a line number, that line's text)"""


def unrolled(fn: Any, program: exported.Program, ops: Collection[str]) -> Line | None:
    """The loop of the student's code that recorded the operations `ops` (names without
    their dialect: `add`, `slice`) of `program` once per iteration: its first line, or the
    repeated line itself when no loop encloses it; None when the program does not say."""
    try:
        return _unrolled(fn, program, frozenset(ops))
    except Exception:  # only a pointer for the student: a program or a file it cannot read
        return None  # costs the pointer, never the check


def _unrolled(fn: Any, program: exported.Program, ops: frozenset[str]) -> Line | None:
    read = _reader(fn)
    chains = _chains(program.module, ops, read)
    if not chains:
        return None
    chain = chains.most_common(1)[0][0]
    for path, line in chain:  # innermost first: the loop may be in a caller of the body
        source = read(path)
        start = _enclosing_loop(source, line) if source is not None else None
        if source is not None and start is not None:
            return os.path.basename(path), start, _text(source, start)
    path, line = chain[0]
    return os.path.basename(path), line, _text(read(path) or "", line)


def _chains(
    module: bytes, ops: frozenset[str], read: Callable[[str], str | None]
) -> Counter[tuple[tuple[str, int], ...]]:
    """How many operations named `ops` each chain of student lines recorded (the frames
    of an operation's location in a lesson file `read` finds, innermost first)."""
    from jax.interpreters import mlir as jax_mlir

    seen: Counter[tuple[tuple[str, int], ...]] = Counter()
    with jax_mlir.make_ir_context() as context:
        parsed = exported._deserialize(module, context)  # held: its operations live in it
        pending = [parsed.operation]
        walked = 0
        while pending and walked < exported.MAX_OPS:
            op = pending.pop()
            walked += 1
            if str(op.name).split(".", 1)[-1] in ops:
                frames = _FRAME.findall(str(op.location))
                chain = tuple((path, int(line)) for path, line in frames if read(path) is not None)
                if chain:
                    seen[chain] += 1
            pending.extend(n.operation for r in op.regions for b in r for n in b)
    return seen


def _reader(fn: Any) -> Callable[[str], str | None]:
    """A function of a path named in the program to the text of that lesson file, read
    from the judge's copy of the lesson folder (a plain file name looked up there); for a
    trusted function run in-process (the tests of the check kinds), the file that defines
    it, as if it were the lesson file. None for any other file (`_outside_lessons`)."""
    lessons = client.handle(fn)._channel.lessons
    code = getattr(fn, "__code__", None)
    own = os.path.realpath(code.co_filename) if not lessons and code is not None else ""

    @functools.cache
    def read(path: str) -> str | None:
        if _outside_lessons(path):
            return None
        if lessons:
            target = os.path.join(lessons, os.path.basename(path))
        elif own and os.path.realpath(path) == own:
            target = own
        else:
            return None
        try:
            with open(target, "rb") as fh:
                return fh.read(MAX_SOURCE_BYTES).decode("utf-8", "replace")
        except OSError:
            return None

    return read


_GRADER = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "")


def _outside_lessons(path: str) -> bool:
    """A file of Python, of an installed library or of the grader itself (the frames of the
    probes that ran the student's function): never a lesson file, whatever its name."""
    from grader.sandbox.server import is_library

    return is_library(path) or os.path.realpath(path).startswith(_GRADER)


def _enclosing_loop(source: str, line: int) -> int | None:
    """The first line of the innermost loop of `source` that holds `line` (None without
    one, or when the file does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    starts = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, _LOOPS) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(starts, default=None)


def _text(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""
