"""`grade watch` grades again only the checks whose code changed since the last grading.

The judge records, for every check, what of the student's module it reached (`records.Uses`:
the module's names it looked up, the checks whose verdicts it stood on, or the whole module
when it handed the module itself to code in the sandbox). A check runs the same way as long
as the code it reached is the same: the module's statements that bind those names, every
statement those refer to by name (followed to the end), and everything the module runs when
it is imported (its statements other than definitions, and what they refer to). That code,
and the verdicts of the checks it stood on, are the check's *fingerprint*; where a save
leaves it unchanged, the check's verdict is kept and the judge runs only the others
(`engine.Partial`: the same `only`/`passed` requests as a rerun after a stopped sandbox).

What is compared:
- for a check that passed in full, each statement as `ast.unparse` writes it (comments,
  blank lines and line numbers do not count: nothing a passed check shows depends on them);
- for any other verdict, each statement's own lines and where they are (its message may
  quote a line of the file and its number);
- always: the screen's findings on the whole file (`source_screen.findings`: what stops the
  judge from crediting an observation), the lesson files this one imports, the suite's own
  file.

Nothing is kept (the whole file is graded) where a name's binding cannot be followed: a
`global` statement, `globals()`, `vars()`, `eval`, `exec`, `__import__`, `sys.modules`,
`__dict__`, `importlib`; where the earlier grading is not a complete one (a stopped sandbox,
a time-out, an error, a grader error, a lesson file that did not import); and for
notebooks. `grade` itself always grades every check. A grading that ends with nothing to lend
(stopped by the next save, or its file did not import) leaves the last complete one in place:
the next save is compared with the source that grading read.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.catalog import ExerciseSpec
from grader.model import ExerciseResult
from grader.protocol import records as rec
from grader.protocol.worker_messages import Ended
from grader.runner import results
from grader.sandbox import source_screen

UNFOLLOWED = frozenset(
    {"globals", "vars", "eval", "exec", "__import__", "__dict__", "importlib", "modules"}
)
"""Names (or attributes) through which code reaches a module's bindings by a string: a file
that uses one keeps no verdict."""

KEPT_STATUSES = frozenset({"passed", "failed", "skipped"})
"""Verdicts that the same code gives again (a time-out or a crash may be the machine's)."""


@dataclass(frozen=True)
class Graded:
    """A complete grading of one lesson file: the `source` it graded (and its `context`, what
    every fingerprint holds besides the code) and its record lines."""

    source: bytes
    context: str
    records: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    """What a new save needs: the checks to run (`rerun`: ids, and the kept checks that
    passed, for their gates) and the record lines of the kept checks (`kept`)."""

    rerun: results.Rerun
    kept: tuple[str, ...]

    @property
    def everything_kept(self) -> bool:
        return not self.rerun.ids

    def merge(self, lines: tuple[str, ...]) -> tuple[str, ...]:
        """The run's record lines with the kept checks' (`merged`)."""
        return merged(lines, self.kept)


# -- the module's code ------------------------------------------------------------------


@dataclass(frozen=True)
class _Statement:
    index: int
    first: int  # its first line (its decorators' included), 1-based
    last: int
    text: str  # ast.unparse
    lines: str  # its own lines as written
    refers: frozenset[str]  # every name it mentions


@dataclass(frozen=True)
class Module:
    """One lesson file's top-level statements: what each binds and mentions."""

    statements: tuple[_Statement, ...]
    binds: Mapping[str, tuple[int, ...]]  # name -> the statements that bind it
    runs: frozenset[int]  # what runs at import: statements other than definitions, followed

    @classmethod
    def parse(cls, source: bytes) -> Module | None:
        """The module, or None when it does not parse or reaches names by strings."""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return None
        lines = source.decode("utf-8", "replace").splitlines()
        statements: list[_Statement] = []
        binds: dict[str, list[int]] = {}
        at_import: list[int] = []
        for index, node in enumerate(tree.body):
            refers = _names(node)
            if refers is None:
                return None
            decorators = getattr(node, "decorator_list", [])
            first = min([node.lineno, *(d.lineno for d in decorators)])
            last = node.end_lineno or node.lineno
            statements.append(
                _Statement(
                    index,
                    first,
                    last,
                    ast.unparse(node),
                    "\n".join(lines[first - 1 : last]),
                    refers,
                )
            )
            for name in _bound(node):
                binds.setdefault(name, []).append(index)
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                at_import.append(index)
        module = cls(tuple(statements), {k: tuple(v) for k, v in binds.items()}, frozenset())
        runs = module.closure((), start=at_import)
        return cls(module.statements, module.binds, frozenset(runs))

    def closure(self, names: Iterable[str], start: Iterable[int] = ()) -> set[int]:
        """The statements binding `names`, those in `start`, and every statement they refer
        to by name, followed to the end."""
        found: set[int] = set()
        todo = list(start)
        for name in names:
            todo.extend(self.binds.get(name, ()))
        while todo:
            index = todo.pop()
            if index in found:
                continue
            found.add(index)
            for name in self.statements[index].refers:
                todo.extend(self.binds.get(name, ()))
        return found

    def code(self, indices: Iterable[int], *, as_written: bool) -> str:
        parts = []
        for index in sorted(indices):
            s = self.statements[index]
            parts.append(f"{s.first}-{s.last}\n{s.lines}" if as_written else s.text)
        return "\n\0".join(parts)


def _names(node: ast.AST) -> frozenset[str] | None:
    """Every name `node` mentions (loads, stores, attribute names, imported names), or None
    when it reaches bindings by strings or declares a name `global`."""
    found: set[str] = set()
    for sub in ast.walk(node):
        match sub:
            case ast.Global():
                return None
            case ast.Name(id=name) if name in UNFOLLOWED:
                return None
            case ast.Attribute(attr=attr) if attr in UNFOLLOWED:
                return None
            case ast.Name(id=name):
                found.add(name)
            case ast.alias(name=name, asname=asname):
                if name.split(".")[0] in UNFOLLOWED:
                    return None
                found.add(asname or name.split(".")[0])
    return frozenset(found)


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (wherever in it: an `if` at the top level binds
    what its branches assign)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    out: set[str] = set()
    for sub in ast.walk(node):
        match sub:
            case ast.Name(id=name, ctx=ast.Store() | ast.Del()):
                out.add(name)
            case ast.alias(name=name, asname=asname):
                out.add(asname or name.split(".")[0])
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name):
                out.add(name)
            case ast.ClassDef(name=name):
                out.add(name)
    return out


# -- fingerprints ----------------------------------------------------------------------


def context(source: bytes, imported: Mapping[str, bytes], suite: bytes) -> str:
    """What every check's fingerprint holds besides the code: the screen's findings, the
    lesson files `source` imports (`imported`: name -> bytes, those there are), the suite."""
    digest = hashlib.sha256()
    for finding in source_screen.findings(source):
        digest.update(f"finding {finding}\n".encode())
    for _, root in source_screen.imported(source):
        if root in imported:
            digest.update(f"imports {root}\n".encode() + imported[root] + b"\0")
    digest.update(b"suite\n" + suite)
    return digest.hexdigest()


@dataclass(frozen=True)
class _Check:
    uses: rec.Uses
    result: rec.Result
    lines: tuple[str, ...]

    @property
    def passed(self) -> bool:
        r = self.result
        return r.status == "passed" and r.fraction >= 1.0 and not r.grader_error


def fingerprints(
    module: Module, checks: Mapping[str, _Check], context_digest: str
) -> dict[str, str]:
    """Each check's fingerprint in `module` (with the verdicts it stood on)."""
    out: dict[str, str] = {}

    def of(check_id: str, seen: frozenset[str]) -> str:
        if check_id in out:
            return out[check_id]
        check = checks.get(check_id)
        if check is None or check_id in seen:
            return f"unknown {check_id}"
        uses = check.uses
        digest = hashlib.sha256(context_digest.encode())
        as_written = not check.passed
        if uses.whole:
            everything = range(len(module.statements))
            digest.update(b"whole\0" + module.code(everything, as_written=True).encode())
        else:
            reached = module.closure(uses.names) | module.runs
            digest.update(module.code(reached, as_written=as_written).encode())
        for gate in sorted(uses.gates):
            digest.update(f"\0gate {gate} {of(gate, seen | {check_id})}".encode())
        out[check_id] = digest.hexdigest()
        return out[check_id]

    for check_id in checks:
        of(check_id, frozenset())
    return out


def _checks(spec: ExerciseSpec, lines: Sequence[str]) -> dict[str, _Check] | None:
    """Each check's uses, result and record lines from a complete grading's `lines`; None
    when the grading cannot lend any verdict (see the module's docstring)."""
    ids = {c.id for c in spec.checks}
    uses: dict[str, rec.Uses] = {}
    found: dict[str, rec.Result] = {}
    own: dict[str, list[str]] = {i: [] for i in ids}
    done = imported = False
    for line in lines:
        record = rec.decode(line)
        match record:
            case rec.Import(ok=ok):
                imported = ok
            case rec.Unrun() | rec.SuiteError() | rec.Skipped() | rec.Notebook():
                return None
            case rec.Done():
                done = True
            case rec.Uses(id=rid) if rid in ids:
                uses[rid] = record
                own[rid].append(line)
            case rec.Result(id=rid) if rid in ids:
                found[rid] = record
                own[rid].append(line)
            case rec.Start(id=rid) | rec.Artifact(id=rid) | rec.Metric(id=rid) if rid in ids:
                own[rid].append(line)
    if not (done and imported) or set(found) != ids:
        return None
    return {
        i: _Check(uses[i], found[i], tuple(own[i]))
        for i in ids
        if i in uses and found[i].status in KEPT_STATUSES and not found[i].grader_error
    }


def plan(spec: ExerciseSpec, earlier: Graded | None, source: bytes, now: str) -> Plan | None:
    """What to grade of `spec`'s file, now `source` (its context digest `now`), given the
    `earlier` grading: None to grade every check."""
    if earlier is None or earlier.context != now:
        return None
    before, after = Module.parse(earlier.source), Module.parse(source)
    checks = _checks(spec, earlier.records)
    if before is None or after is None or not checks:
        return None
    old = fingerprints(before, checks, now)
    new = fingerprints(after, checks, now)
    kept = {i for i in checks if old[i] == new[i]}
    # a check run again decides its gates live: a gate it stands on that did not pass is
    # run again with it (its verdict, not only its name, shapes the check's message)
    rerun = {c.id for c in spec.checks} - kept
    todo = list(rerun)
    while todo:
        check = checks.get(todo.pop())
        for gate in check.uses.gates if check is not None else ():
            if gate in kept and not checks[gate].passed:
                kept.discard(gate)
                rerun.add(gate)
                todo.append(gate)
    order = [c.id for c in spec.checks]
    return Plan(
        results.Rerun(
            ids=tuple(i for i in order if i in rerun),
            passed=tuple(i for i in order if i in kept and checks[i].passed),
            unjudged=(),
            stopped=(),
        ),
        tuple(line for i in order if i in kept for line in checks[i].lines),
    )


def merged(lines: Sequence[str], kept: Sequence[str]) -> tuple[str, ...]:
    """A partial grading's record lines with the kept checks' lines before its `Done`; its
    own lines alone when its lesson file did not import (nothing kept can stand then)."""
    records = [rec.decode(line) for line in lines]
    if not any(isinstance(r, rec.Import) and r.ok for r in records):
        return tuple(lines)
    body = [line for line, r in zip(lines, records, strict=True) if not isinstance(r, rec.Done)]
    done = len(body) != len(lines)
    return (*body, *kept, *((rec.encode(rec.Done()).decode().rstrip("\n"),) if done else ()))


def read_context(
    spec: ExerciseSpec, source: bytes, files: Mapping[str, Path], options: object = None
) -> str:
    """`context` from the files themselves, and the grading's `options` (a seed or a time
    limit changes verdicts); "" when a file cannot be read: nothing is kept."""
    imported: dict[str, bytes] = {}
    try:
        for _, root in source_screen.imported(source):
            path = files.get(root)
            if path is not None and path.suffix == ".py":
                imported[root] = path.read_bytes()
        suite = Path(spec.suite).read_bytes()
    except OSError:
        return ""
    return context(source, imported, suite + f"\0{options!r}".encode())


Run = Callable[[Plan | None, Callable[[tuple[str, ...]], None]], ExerciseResult]
"""Grades a file: all of it, or as the plan says (`engine.grade_one(partial=...,
on_graded=...)`), telling the callback the record lines its result comes from."""


class Kept:
    """The last grading of each lesson file, for a session that grades the same files again
    and again (`grade watch`, `%grade`)."""

    def __init__(self) -> None:
        self._graded: dict[str, Graded] = {}

    def grade(
        self,
        spec: ExerciseSpec,
        file: Path,
        files: Mapping[str, Path],
        options: object,
        run: Run,
        graded_copy: Callable[[], Path],
    ) -> ExerciseResult:
        """Grade `file` with `run`: only the checks whose code changed since its last
        grading, none when nothing they reach changed. `graded_copy()`: where the grading
        copied the file (kept only if that is what was read here: no save in between)."""
        try:
            source = file.read_bytes() if file.suffix == ".py" else b""
        except OSError:
            source = b""
        now = read_context(spec, source, files, options) if source else ""
        earlier = self._graded.pop(spec.name, None)
        found = plan(spec, earlier, source, now) if now else None
        if found is not None and earlier is not None and found.everything_kept:
            self._graded[spec.name] = Graded(earlier.source, now, earlier.records)
            ended = Ended(exit_code=0, records=earlier.records)
            return results.assemble(spec, results.Ending(ended), file.name)
        lines: list[tuple[str, ...]] = []
        result = run(found, lines.append)
        if now and lines and _checks(spec, lines[0]) and _holds(graded_copy(), source):
            self._graded[spec.name] = Graded(source, now, lines[0])
        elif earlier is not None:  # stopped by the next save, or nothing to lend: the last
            self._graded[spec.name] = earlier  # complete grading still holds for its source
        return result


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False
