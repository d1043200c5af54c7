"""What the judge reads in the lesson file itself before trusting an observation.

A probe runs in the sandbox, in the same Python process as the student's module, so
its result is only as good as that process is honest: a module that reassigns
`jax.make_jaxpr`, reaches into `grader.*`, or starts a thread that undoes its own
side effects between two snapshots can make a failing observation read as a
passing one. The probes use references bound before the module loads
(`grader.probes._bound`), and the judge corroborates them with what it can
read itself: the syntax tree of the source the sandbox sent before the student's
code ran (`Channel.source`). A module doing any of the things below gets no credit
for observed properties; the message names the line.

    findings = screen.findings(source_bytes)   # [] for an ordinary lesson file

Values the judge compares with its own references, and compiled programs the judge
runs itself (`grader.probes.exported`, checked by `grader.checks.exported`), do not depend on this: they are verified in
the judge whatever the module does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

MAX_SOURCE_BYTES = 4 << 20
"""A lesson file larger than this is not parsed: its observations get no credit."""

# Modules whose import alone gives a module the means to tamper with the sandbox's
# observations: other threads or processes running beside a probe, the garbage
# collector's view of every object, frames, C calls, the import system, the grader.
_FORBIDDEN_MODULES = {
    "grader": "imports the grader itself",
    "threading": "starts threads (`threading`)",
    "_thread": "starts threads (`_thread`)",
    "concurrent": "starts threads or processes (`concurrent.futures`)",
    "multiprocessing": "starts processes (`multiprocessing`)",
    "asyncio": "runs code concurrently (`asyncio`)",
    "subprocess": "starts processes (`subprocess`)",
    "signal": "installs signal handlers (`signal`)",
    "ctypes": "calls into C directly (`ctypes`)",
    "cffi": "calls into C directly (`cffi`)",
    "gc": "reaches every live object (`gc`)",
    "inspect": "reads frames and functions of the running program (`inspect`)",
    "importlib": "drives the import system (`importlib`)",
    "builtins": "rewrites Python's builtins (`builtins`)",
    "atexit": "registers exit hooks (`atexit`)",
    "sitecustomize": "imports `sitecustomize`",
    "traceback": "reads the frames of the running program (`traceback`)",
}

# Attributes of frames, tracebacks and generators: a path to the grader's own variables.
_FRAME_ATTRIBUTES = frozenset(
    {
        "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next",
        "gi_frame", "cr_frame", "ag_frame", "gi_code", "cr_code",
    }
)  # fmt: skip

# Attributes of `sys` and `os` that change how the process runs, or start processes.
_FORBIDDEN_ATTRIBUTES = {
    "sys": {
        "modules", "settrace", "setprofile", "_getframe", "_current_frames", "meta_path",
        "path_hooks", "addaudithook", "monitoring", "setswitchinterval", "setrecursionlimit",
        "excepthook", "displayhook", "stdout", "stderr", "breakpointhook", "exc_info",
        "exception", "last_traceback", "last_value", "last_exc",
    },
    "os": {
        "fork", "forkpty", "kill", "killpg", "system", "popen", "posix_spawn", "posix_spawnp",
        "register_at_fork", "execv", "execve", "execl", "execle", "execlp", "execlpe",
        "execvp", "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve",
        "spawnvp", "spawnvpe",
    },
}  # fmt: skip

# Builtins that run or reach code by a name computed at run time.
_FORBIDDEN_CALLS = {
    "exec": "runs code from a string (`exec`)",
    "eval": "runs code from a string (`eval`)",
    "compile": "compiles code from a string (`compile`)",
    "__import__": "imports by a computed name (`__import__`)",
    "setattr": "sets attributes by name (`setattr`)",
    "delattr": "deletes attributes by name (`delattr`)",
    "breakpoint": "enters the debugger (`breakpoint`)",
}

# Dunder attributes a lesson has an ordinary use for; any other (`__code__`, `__globals__`,
# `__dict__`, `__subclasses__`, `__builtins__`, `__closure__`, ...) reaches the machinery.
_PLAIN_DUNDERS = frozenset(
    {
        "__name__", "__qualname__", "__doc__", "__init__", "__call__", "__len__",
        "__getitem__", "__iter__", "__next__", "__enter__", "__exit__", "__repr__",
        "__str__", "__eq__", "__hash__", "__post_init__", "__class__", "__module__",
        "__add__", "__mul__", "__array__", "__jax_array__", "__file__", "__version__",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Finding:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}" if self.line else self.what


def findings(source: bytes | None) -> list[Finding]:
    """What in `source` can tamper with an observation made in its process ([] if
    nothing); a file that cannot be read or parsed is one finding."""
    if source is None:
        return [Finding(0, "the grader did not receive the lesson file before it ran")]
    if len(source) > MAX_SOURCE_BYTES:
        return [Finding(0, f"the lesson file is larger than {MAX_SOURCE_BYTES >> 20} MiB")]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [Finding(getattr(exc, "lineno", 0) or 0, "the lesson file does not parse")]
    cells = notebook_cells(tree)
    if cells is not None:
        return _cells_findings(cells)
    return _Screen().run(tree)


def notebook_cells(tree: ast.Module) -> list[tuple[int, str]] | None:
    """The cells of a lesson file built from a notebook (`grader.notebooks.module.render`:
    a docstring, the import of `exec_cells`, one call of it on a literal list of
    `(number, code, source)`, `del _exec_cells`), as `(number, code)`; None for any other
    file. The wrapper is the grader's own: what runs is the cells' code, screened instead."""
    body = tree.body
    if len(body) != 4:
        return None
    doc, imported, call, delete = body
    if not (
        isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
        and isinstance(imported, ast.ImportFrom)
        and imported.module == "grader.notebooks.module"
        and imported.level == 0
        and [(a.name, a.asname) for a in imported.names] == [("exec_cells", "_exec_cells")]
        and isinstance(delete, ast.Delete)
        and [getattr(t, "id", None) for t in delete.targets] == ["_exec_cells"]
        and isinstance(call, ast.Expr)
        and isinstance(call.value, ast.Call)
        and isinstance(call.value.func, ast.Name)
        and call.value.func.id == "_exec_cells"
        and not call.value.keywords
        and len(call.value.args) == 3
    ):
        return None
    namespace, label, listed = call.value.args
    if not (
        isinstance(namespace, ast.Call)
        and isinstance(namespace.func, ast.Name)
        and namespace.func.id == "globals"
        and not namespace.args
        and not namespace.keywords
        and isinstance(label, ast.Constant)
        and isinstance(label.value, str)
    ):
        return None
    try:
        cells = ast.literal_eval(listed)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if not isinstance(cells, list) or not all(
        isinstance(c, tuple)
        and len(c) == 3
        and isinstance(c[0], int)
        and isinstance(c[1], str)
        and isinstance(c[2], str)
        for c in cells
    ):
        return None
    return [(number, code) for number, code, _ in cells]


def _cells_findings(cells: list[tuple[int, str]]) -> list[Finding]:
    """The cells screened as the one module they make (a name bound in one cell is known
    in the next), each finding named by its cell and the line in it."""
    starts: list[tuple[int, int]] = []  # (first line in the joined text, cell number)
    lines: list[str] = []
    for number, code in cells:
        starts.append((len(lines) + 1, number))
        lines += code.splitlines() or [""]
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [Finding(0, "the notebook's cells do not parse together")]
    out = []
    for found in _Screen().run(tree):
        first, number = next(((f, n) for f, n in reversed(starts) if f <= found.line), (1, 0))
        where = f"cell {number}, line {found.line - first + 1}" if found.line else ""
        out.append(Finding(0, f"{where}: {found.what}" if where else found.what))
    return out


class _Screen(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[Finding] = []
        self.modules: dict[str, str] = {}  # a name bound by an import -> the module's root

    def run(self, tree: ast.AST) -> list[Finding]:
        for node in ast.walk(tree):  # every import binding first, wherever it is
            if isinstance(node, ast.Import):
                for alias in node.names:
                    root = alias.name.split(".")[0]
                    self.modules[alias.asname or root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.modules[alias.asname or alias.name] = node.module.split(".")[0]
        for _ in range(3):  # another name for a module: `m = jax`, `e = jax.export`
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign | ast.NamedExpr):
                    source = self._root(node.value)
                    if source is not None and source.id in self.modules:
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        for t in targets:
                            if isinstance(t, ast.Name) and isinstance(
                                node.value, ast.Name | ast.Attribute
                            ):
                                self.modules.setdefault(t.id, self.modules[source.id])
        self.visit(tree)
        unique: dict[tuple[int, str], Finding] = {}
        for f in self.found:
            unique.setdefault((f.line, f.what), f)
        return sorted(unique.values(), key=lambda f: (f.line, f.what))

    def _add(self, node: ast.AST, what: str) -> None:
        self.found.append(Finding(getattr(node, "lineno", 0), what))

    def visit_If(self, node: ast.If) -> None:
        """`if __name__ == "__main__":` runs only as a script, never when graded."""
        test = node.test
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
        ):
            for stmt in node.orelse:
                self.visit(stmt)
            return
        self.generic_visit(node)

    # -- imports ----------------------------------------------------------------------
    def _module(self, node: ast.AST, name: str) -> None:
        parts = name.split(".")
        why = _FORBIDDEN_MODULES.get(parts[0])
        if why:
            self._add(node, why)
        elif any(p.startswith("_") for p in parts):
            self._add(node, f"imports the private module `{name}`")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            self._module(node, node.module)
            for alias in node.names:
                if alias.name.startswith("_"):
                    self._add(node, f"imports the private name `{node.module}.{alias.name}`")
                elif alias.name in _FORBIDDEN_ATTRIBUTES.get(node.module, ()):
                    self._add(node, f"imports `{node.module}.{alias.name}`")
                else:
                    self._module(node, f"{node.module}.{alias.name}")
        self.generic_visit(node)

    # -- names and attributes -----------------------------------------------------------
    def _root(self, node: ast.AST) -> ast.Name | None:
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        return node if isinstance(node, ast.Name) else None

    def _store(self, target: ast.AST) -> None:
        """An assignment or deletion target: writing into an imported module is tampering."""
        if isinstance(target, ast.Tuple | ast.List):
            for t in target.elts:
                self._store(t)
            return
        if isinstance(target, ast.Starred):
            self._store(target.value)
            return
        if isinstance(target, ast.Attribute | ast.Subscript):
            root = self._root(target)
            if _is_environ(target):  # `os.environ["XLA_FLAGS"] = ...`: the process's settings
                return
            if root is not None and root.id in self.modules:
                self._add(
                    target,
                    f"assigns into the module `{self.modules[root.id]}` "
                    f"(`{ast.unparse(target)[:80]}`)",
                )

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._store(t)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._store(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._store(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._store(t)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        if _is_machinery(name) or name in _FRAME_ATTRIBUTES:
            self._add(node, f"reaches the interpreter's machinery (`.{name}`)")
        root = self._root(node)
        if root is not None and isinstance(node.value, ast.Name):
            module = self.modules.get(root.id)
            if module in _FORBIDDEN_ATTRIBUTES and name in _FORBIDDEN_ATTRIBUTES[module]:
                self._add(node, f"uses `{module}.{name}`")
        private = name.startswith("_") and not name.startswith("__")
        if private and root is not None and root.id in self.modules:  # `jax._src`, `np._core`
            self._add(node, f"reaches a private part of `{self.modules[root.id]}` (`.{name}`)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__import__", "__loader__", "__spec__"):
            self._add(node, f"uses `{node.id}`")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _FORBIDDEN_CALLS:
            self._add(node, _FORBIDDEN_CALLS[func.id])
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and node.args:
            name = node.args[1] if len(node.args) > 1 else None
            literal = name.value if isinstance(name, ast.Constant) else None
            root = self._root(node.args[0])
            if root is not None and root.id in self.modules and not isinstance(literal, str):
                self._add(node, f"reads `{self.modules[root.id]}` by a computed name (`getattr`)")
            if isinstance(literal, str) and _is_machinery(literal):
                self._add(node, f"reaches the interpreter's machinery (`{literal}`)")
        if isinstance(func, ast.Name) and func.id in ("globals", "vars") and node.args:
            self._add(node, f"reaches another namespace (`{func.id}(...)`)")
        self.generic_visit(node)


def _is_machinery(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name not in _PLAIN_DUNDERS


def _is_environ(target: ast.AST) -> bool:
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Attribute)
        and target.value.attr == "environ"
        and isinstance(target.value.value, ast.Name)
        and target.value.value.id == "os"
    )


def message(found: list[Finding]) -> str:
    """The findings as one line for a check's failure."""
    shown = "; ".join(str(f) for f in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return shown + more
