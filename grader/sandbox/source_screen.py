"""What the judge reads in the lesson file itself before trusting an observation.

A probe runs in the sandbox, in the same Python process as the student's module, so
its result is only as good as that process is honest. The probes call the JAX functions
they use through references bound before the module loads (`grader.probes._bound`) and
look themselves up in a registry copied then (`server.serve`), so a module that rebinds
`jax.jit` for its own use changes nothing they see. What can still reach them is the
small set of ways one piece of Python can act on another one running in the same
process, and only those are refused:

- the grader's own modules: importing `grader`, or importing by a name computed at run
  time (`__import__`, `importlib.import_module(name)`, `importlib.reload`, loaders);
- frames and what they hold (the probes' variables and globals are in them):
  `sys._getframe`, `sys.exc_info`, `inspect.currentframe/stack/trace/getouterframes/
  getinnerframes/getframeinfo/getargvalues/get*locals/getclosurevars/getmembers/getmodule`,
  `traceback.walk_stack/walk_tb/clear_frames`, `.f_back/.f_globals/.tb_frame/.gi_frame...`,
  and the dunders that lead to them or to every object (`__globals__`, `__code__`,
  `__closure__`, `__traceback__`, `__subclasses__`, `__self__`, `__builtins__`);
- the import system and the interpreter's hooks: `sys.modules`, `sys.meta_path`,
  `sys.path_hooks`, `importlib.machinery/abc`, `sys.settrace/setprofile/monitoring/
  addaudithook`, the debugger (`pdb`, `breakpoint`);
- code running beside a probe: threads, processes and signals (`threading`, `_thread`,
  `concurrent`, `multiprocessing`, `asyncio`, `subprocess`, `signal`, `os.fork/kill/
  system/exec*/spawn*`), finalizers (`def __del__`, `weakref.finalize`, a callback of
  `weakref.ref`), and `contextlib.redirect_stdout/stderr`, which swaps the stream a
  probe captures;
- the collector, C and memory: `gc`, `ctypes`, `cffi`, `/proc/.../mem`, `builtins` (Python's
  builtins under other names), and any private module or private part of an imported one
  (`jax._src`);
- code from strings and names computed into modules: `exec`, `eval`, `compile`,
  `getattr/hasattr(module, name)` with a computed name, `vars(module)`, `module.__dict__`;
- writing into an imported module (`jax.jit = ...`, `setattr(np, ...)`,
  `sys.stdout = ...`): the module is shared with everything else in the process; likewise
  `jax.config.update("jax_disable_jit", ...)`, which turns the probes' own jit off.

Everything else is ordinary Python and is left alone: `from __future__ import ...`,
type hints, dataclasses, `typing`, `functools`, logging, `inspect.signature/getsource`,
`traceback.print_exc/format_exc`, reading `sys.stderr/argv/version_info`,
`importlib.util.find_spec`, `importlib.import_module("a literal name")`,
`importlib.metadata`, `setattr/getattr` on an object that is not a module,
`__annotations__/__dataclass_fields__/__slots__/__dict__` of one's own objects,
`jax.debug.print`. The body of `if __name__ == "__main__":` never runs when graded and
is not read (unless the module, outside that block, rebinds `__name__` or uses `globals()`).

A module doing one of the refused things gets no credit for observed properties: each
check whose evidence is observed in the sandbox fails with the findings, each naming the
construct and its line (`client.require_observable`), and a gate standing on such a check
says its values could not be judged, never that they are wrong (`grader.plugin.gates`).
Checks of values and of compiled programs are judged as for any module.

    findings = screen.findings(source_bytes)   # [] for an ordinary lesson file

This is corroboration, not proof: an attribute name built at run time and read with
`getattr` from an ordinary object is not followed. Values the judge compares with its
own references, and compiled programs the judge runs itself (`grader.probes.exported`,
checked by `grader.checks.exported`), do not depend on it: they are verified in the
judge whatever the module does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

MAX_SOURCE_BYTES = 4 << 20
"""A lesson file larger than this is not parsed: its observations get no credit."""

# Modules whose import alone reaches what runs beside a probe: the grader, other threads
# or processes, signal handlers, the collector's view of every object, C, the debugger.
_REFUSED_MODULES = {
    "grader": "imports the grader itself (`{name}`): its probes run beside your code",
    "threading": "starts threads (`threading`), which run beside a probe",
    "_thread": "starts threads (`_thread`), which run beside a probe",
    "concurrent": "starts threads or processes (`concurrent.futures`)",
    "multiprocessing": "starts processes (`multiprocessing`)",
    "asyncio": "runs code concurrently (`asyncio`)",
    "subprocess": "starts processes (`subprocess`)",
    "signal": "installs signal handlers (`signal`), which interrupt a probe",
    "ctypes": "calls into C directly (`ctypes`)",
    "_ctypes": "calls into C directly (`_ctypes`)",
    "cffi": "calls into C directly (`cffi`)",
    "gc": "reaches every live object (`gc`)",
    "builtins": "reaches Python's builtins under other names (`builtins`)",
    "pdb": "starts the debugger (`pdb`), which traces frames",
    "bdb": "starts the debugger (`bdb`), which traces frames",
    "__main__": "imports the program's main module (`__main__`): the grader's sandbox",
    "importlib.machinery": "drives the import system (`{name}`)",
    "runpy": "runs code from a file the grader does not read (`runpy`)",
    "code": "runs code from strings (`code`)",
    "codeop": "compiles code from strings (`codeop`)",
    "zipimport": "imports code from an archive the grader does not read (`zipimport`)",
    "marshal": "loads compiled code (`marshal`)",
    "importlib.abc": "installs import hooks (`{name}`)",
    "sys.monitoring": "installs tracing hooks (`sys.monitoring`)",
}

# What of a module reaches frames, hooks, the import system or other processes; the rest
# of the module is ordinary (`inspect.signature`, `traceback.print_exc`, `sys.stderr`).
_FRAMES = "reads frames of the running program (`{name}`), where the grader's variables are"
_REFUSED_ATTRIBUTES = {
    "sys": {
        **dict.fromkeys(("_getframe", "_current_frames", "_current_exceptions"), _FRAMES),
        **dict.fromkeys(
            ("exc_info", "exception", "last_traceback", "last_value", "last_exc"),
            "reads an exception's traceback (`{name}`), whose frames lead to the grader's",
        ),
        "modules": "reaches every imported module, the grader's included (`sys.modules`)",
        **dict.fromkeys(
            ("meta_path", "path_hooks", "path_importer_cache"),
            "drives the import system (`{name}`)",
        ),
        **dict.fromkeys(
            ("settrace", "setprofile", "monitoring", "addaudithook", "call_tracing"),
            "installs a tracing hook (`{name}`), called inside the grader's code",
        ),
    },
    "os": dict.fromkeys(
        (
            "fork",
            "forkpty",
            "kill",
            "killpg",
            "system",
            "popen",
            "posix_spawn",
            "posix_spawnp",
            "register_at_fork",
            "execv",
            "execve",
            "execl",
            "execle",
            "execlp",
            "execlpe",
            "execvp",
            "execvpe",
            "spawnl",
            "spawnle",
            "spawnlp",
            "spawnlpe",
            "spawnv",
            "spawnve",
            "spawnvp",
            "spawnvpe",
        ),
        "starts or signals processes (`{name}`)",
    ),
    "inspect": {
        **dict.fromkeys(
            (
                "currentframe",
                "stack",
                "trace",
                "getouterframes",
                "getinnerframes",
                "getframeinfo",
                "getargvalues",
                "getgeneratorlocals",
                "getcoroutinelocals",
                "getasyncgenlocals",
                "getclosurevars",
            ),
            _FRAMES,
        ),
        **dict.fromkeys(
            ("getmembers", "getmembers_static", "getattr_static"),
            "reads every attribute of an object, dunders included (`{name}`)",
        ),
        "getmodule": "reaches a module from an object (`inspect.getmodule`)",
    },
    "traceback": {
        **dict.fromkeys(("walk_stack", "walk_tb"), _FRAMES),
        "clear_frames": "clears the variables of frames (`traceback.clear_frames`)",
    },
    "importlib": {
        "reload": "runs a module again (`importlib.reload`)",
        "machinery": "drives the import system (`importlib.machinery`)",
        "abc": "installs import hooks (`importlib.abc`)",
    },
    "importlib.util": dict.fromkeys(
        ("module_from_spec", "spec_from_file_location", "spec_from_loader", "LazyLoader"),
        "loads a module by hand (`{name}`)",
    ),
    "contextlib": dict.fromkeys(
        ("redirect_stdout", "redirect_stderr"),
        "swaps the process's output stream (`{name}`), which a probe captures",
    ),
    "weakref": {"finalize": "runs code when an object is collected (`weakref.finalize`)"},
}

# Any attribute of these names: a frame, a traceback, a generator's frame or code.
_FRAME_ATTRIBUTES = frozenset(
    {
        "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace", "tb_frame",
        "tb_next", "gi_frame", "cr_frame", "ag_frame", "gi_code", "cr_code", "ag_code",
        "exec_module", "load_module",
    }
)  # fmt: skip

# Dunders that lead to a function's globals, a frame, every class, or the builtins; other
# dunders (`__annotations__`, `__dataclass_fields__`, `__class__`, `__dict__` of one's
# own objects...) are ordinary.
_MACHINERY = frozenset(
    {
        "__globals__", "__builtins__", "__code__", "__closure__", "__subclasses__",
        "__traceback__", "__self__", "__import__", "__loader__", "__spec__",
    }
)  # fmt: skip

# Builtins that run code from a string, import by a computed name, or trace frames.
_REFUSED_CALLS = {
    "exec": "runs code from a string (`exec`)",
    "eval": "runs code from a string (`eval`)",
    "compile": "compiles code from a string (`compile`)",
    "__import__": "imports by a computed name (`__import__`)",
    "breakpoint": "enters the debugger (`breakpoint`), which traces frames",
}

# JAX options that change what the probes' own `jax.jit` does, for the whole process.
_JAX_OPTIONS = {
    "jax_disable_jit": "turns jit off for the whole process, the grader's included "
    "(`jax_disable_jit`)",
}

_IMPORT_MODULE = "importlib.import_module"
_WEAK_CALLBACKS = frozenset({"weakref.ref", "weakref.proxy"})


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


def imported(source: bytes | None) -> list[tuple[int, str]]:
    """(line, top-level module name) of every import in `source`: statements, wherever
    they are, and `importlib.import_module` of a literal name ([] when it does not parse).
    The judge reads an imported lesson file too (`client.Channel.tampering`): its code runs
    in the same process."""
    if source is None or len(source) > MAX_SOURCE_BYTES:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    cells = notebook_cells(tree)
    if cells is not None:
        try:
            tree = ast.parse("\n".join(code for _, code in cells))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module.split(".")[0]))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
        ):
            name = _literal(node.args[0])
            if isinstance(name, str) and name:
                found.append((node.lineno, name.split(".")[0]))
    return found


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
        self.names: dict[str, str] = {}  # a name bound to a module (or a name in one) -> it
        self.defined: set[str] = set()  # names the module binds itself (`def compile`)
        self.main_runs = False  # the `__main__` block can run when graded

    def run(self, tree: ast.AST) -> list[Finding]:
        in_main = {  # what runs only as a script: it cannot make itself run when graded
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_main_test(node.test)
            for stmt in node.body
            for inner in ast.walk(stmt)
        }
        for node in ast.walk(tree):  # every import binding first, wherever it is
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        self.names[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.defined.add(node.name)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.defined.add(node.id)
                self.main_runs |= node.id == "__name__" and id(node) not in in_main
            elif isinstance(node, ast.Call) and not node.args and not node.keywords:
                self.main_runs |= (
                    isinstance(node.func, ast.Name)
                    and node.func.id in ("globals", "vars")
                    and id(node) not in in_main
                )
        for _ in range(3):  # another name for a module: `m = jax`, `e = jax.export`
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign | ast.NamedExpr):
                    source = self._qualified(node.value)
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if source is not None and isinstance(t, ast.Name):
                            self.names.setdefault(t.id, source)
        self.visit(tree)
        unique: dict[tuple[int, str], Finding] = {}
        for f in self.found:
            unique.setdefault((f.line, f.what), f)
        return sorted(unique.values(), key=lambda f: (f.line, f.what))

    def _add(self, node: ast.AST, what: str) -> None:
        self.found.append(Finding(getattr(node, "lineno", 0), what))

    def _qualified(self, node: ast.AST) -> str | None:
        """The dotted name `node` refers to when it is (a part of) an imported module:
        `jnp.where` -> "jax.numpy.where"; `importlib.import_module("optax")` -> "optax"."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            inner = self._qualified(node.value)
            return f"{inner}.{node.attr}" if inner else None
        if isinstance(node, ast.Call) and self._qualified(node.func) == _IMPORT_MODULE:
            name = _literal(node.args[0]) if node.args else None
            return name
        return None

    def _module_of(self, node: ast.AST) -> str | None:
        """The imported module an expression starts from (`jnp.linalg.norm` -> "jax")."""
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id].split(".")[0]
        return None

    def visit_If(self, node: ast.If) -> None:
        """`if __name__ == "__main__":` runs only as a script, never when graded (unless
        the module rebinds `__name__`, or reaches its namespace through `globals()`)."""
        if not self.main_runs and _is_main_test(node.test):
            for stmt in node.orelse:
                self.visit(stmt)
            return
        self.generic_visit(node)

    # -- imports ----------------------------------------------------------------------
    def _import(self, node: ast.AST, name: str) -> None:
        why = _module_reason(name)
        if why:
            self._add(node, why)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "__future__" or not node.module or node.level:
            return
        self._import(node, node.module)
        for alias in node.names:
            if alias.name.startswith("_") and not _module_reason(node.module):
                self._add(node, f"imports the private name `{node.module}.{alias.name}`")
            else:
                self._attribute(node, node.module, alias.name)
                if not _module_reason(node.module):
                    self._import(node, f"{node.module}.{alias.name}")

    # -- names and attributes -----------------------------------------------------------
    def _attribute(self, node: ast.AST, module: str, name: str) -> None:
        """`module.name`, where `module` is the dotted name of an imported module."""
        why = _REFUSED_ATTRIBUTES.get(module, {}).get(name)
        if why:
            self._add(node, why.format(name=f"{module}.{name}"))
        elif name.startswith("_") and not name.startswith("__"):  # `jax._src`, `np._core`
            self._add(node, f"reaches a private part of `{module}` (`.{name}`)")

    def _store(self, target: ast.AST) -> None:
        """An assignment or deletion target: writing into an imported module is tampering."""
        if isinstance(target, ast.Tuple | ast.List):
            for t in target.elts:
                self._store(t)
            return
        if isinstance(target, ast.Starred):
            self._store(target.value)
            return
        if isinstance(target, ast.Attribute | ast.Subscript) and not _is_settings(target):
            module = self._module_of(target)
            if module is not None:
                self._add(
                    target,
                    f"assigns into the module `{module}` (`{ast.unparse(target)[:80]}`), "
                    "which the grader shares",
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

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name == "__del__":
            self._add(node, "defines `__del__`, which runs whenever the object is collected")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        if name in _MACHINERY or name in _FRAME_ATTRIBUTES:
            self._add(node, f"reaches the interpreter's machinery (`.{name}`)")
        module = self._qualified(node.value)
        if module is not None:
            self._attribute(node, module, name)
            if name == "__dict__":
                self._add(node, f"reads the namespace of `{module}` (`.__dict__`)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _MACHINERY:
            self._add(node, f"uses `{node.id}`")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if node.value in _MACHINERY or node.value in _FRAME_ATTRIBUTES:
            self._add(node, f"names the interpreter's machinery (`{node.value}`)")
        elif (
            isinstance(node.value, str)
            and node.value.startswith("/proc/")
            and (node.value.endswith("/mem"))
        ):
            self._add(node, f"opens a process's memory (`{node.value}`)")

    def visit_Call(self, node: ast.Call) -> None:
        func, args = node.func, node.args
        called = func.id if isinstance(func, ast.Name) else None
        if called in _REFUSED_CALLS and called not in self.defined:
            self._add(node, _REFUSED_CALLS[called])
        qualified = self._qualified(func)
        if qualified == _IMPORT_MODULE:
            name = _literal(args[0]) if args else None
            if name is None:
                self._add(node, f"imports by a computed name (`{_IMPORT_MODULE}`)")
            else:
                self._import(node, name)
        if qualified in _WEAK_CALLBACKS and len(args) + len(node.keywords) > 1:
            self._add(node, f"runs code when an object is collected (a callback of `{qualified}`)")
        module = self._module_of(args[0]) if args else None
        if isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__"):
            # `object.__setattr__(jax, ...)` or `jax.__setattr__(...)`
            module = module or self._module_of(func.value)
            called = "setattr"
        elif isinstance(func, ast.Attribute) and func.attr == "__getattribute__":
            module = module or self._module_of(func.value)
            called = "getattr"
            args = [func.value, *args] if self._module_of(func.value) else args
        if qualified == "jax.config.update":
            flag = _literal(args[0]) if args else None
            why = _JAX_OPTIONS.get(flag) if flag else "sets a JAX option by a computed name"
            if why:
                self._add(node, why)
        if module is not None and called in ("setattr", "delattr"):
            self._add(node, f"sets an attribute of the module `{module}` (`{ast.unparse(func)}`)")
        if module is not None and called in ("getattr", "hasattr"):
            literal = _literal(args[1]) if len(args) > 1 else None
            target = self._qualified(args[0])
            if literal is None:
                self._add(node, f"reads `{module}` by a computed name (`{called}`)")
            elif target is not None:
                self._attribute(node, target, literal)
        if called == "vars" and module is not None:
            self._add(node, f"reads the namespace of `{module}` (`vars`)")
        self.generic_visit(node)


def _module_reason(name: str) -> str:
    """Why importing the module `name` reaches the probes ("" when it does not)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        why = _REFUSED_MODULES.get(".".join(parts[:n]))
        if why:
            return why.format(name=name)
    if name != "__future__" and any(p.startswith("_") for p in parts):
        return f"imports the private module `{name}`"
    return ""


def _is_main_test(test: ast.AST) -> bool:
    """`__name__ == "__main__"`."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_settings(target: ast.AST) -> bool:
    """`os.environ["XLA_FLAGS"] = ...`, `plt.rcParams["figure.dpi"] = ...`: an entry of
    the process's or the plots' settings, which no probe reads."""
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Attribute)
        and target.value.attr in ("environ", "rcParams")
    )


def message(found: list[Finding]) -> str:
    """The findings as one line for a check's failure."""
    shown = "; ".join(str(f) for f in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return shown + more
