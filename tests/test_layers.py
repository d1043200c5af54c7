"""The grader's layers import downwards only.

    grader.model, grader.protocol   data and messages: no sandbox, no runner
    grader.sandbox                  the student's side and the judge's client: no runner,
                                    and nothing of the judge's (checks, plugin, suites,
                                    authoring)
    grader.probes                   what the sandbox runs next to the student's code: no
                                    check, plugin, suite, runner or authoring API (it is
                                    loaded in the sandbox; the checks import it, not the
                                    other way round)
    grader.runner                   the parent, the warm worker, the judge's start
    grader.reports                  what renders the result model: no runner, sandbox or
                                    protocol, nothing of the judge's, and no feature that
                                    grades or reads gradings (`FRONT`), nor what turns a
                                    graded report into what a reader sees (audience,
                                    next_step, ladder)
    grader.settings, hints,         the course's settings, the help policy, `.grade/` and
    state, invocations              the commands a report names: beneath the reports, so
                                    they import none of what the reports may not, nor the
                                    reports
    grader.model, errors, catalog,  what every layer may use (`FOUNDATION`): none of them
    rounding, atomic, arguments,    imports the runner, the sandbox, the protocol, the
    version, isolation_levels       reports, the help or a feature
    grader.commands                 the command line's arguments: imported by `grader.cli`
                                    and by each other only (`ONLY_FROM`)

Every module of `grader/` is parsed (never imported) and each of its static imports read,
those inside functions and `if TYPE_CHECKING:` blocks included, as well as
`importlib.import_module("...")` with a literal name. `layer_violations` is given the
package's folder, so the rules are tried on a small tree that breaks them too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).resolve().parent

JUDGE_SIDE = ("checks", "plugin", "suites", "authoring")
"""What the judge runs and the sandbox must not load: the checks and what runs them."""

FRONT = (
    "cli",
    "commands",
    "grading",
    "notebooks",
    "watch",
    "batch",
    "course",
    "mutate",
    "classroom",
)
"""What a user runs: the command line and the features that grade or read gradings."""

BENEATH_REPORTS = (
    "runner",
    "sandbox",
    "protocol",
    *JUDGE_SIDE,
    *FRONT,
    "audience",
    "next_step",
    "ladder",
)
"""What no report imports: the reports render the result model, whoever graded it."""

HELP = ("settings", "hints", "state", "invocations")
"""The course's settings, the help policy, `.grade/` and the commands a report names."""

FOUNDATION = (
    "model",
    "errors",
    "catalog",
    "rounding",
    "atomic",
    "arguments",
    "version",
    "isolation_levels",
)
"""What every layer may use: data, the grader's errors, the catalog, plain helpers."""

RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model", ("sandbox", "runner")),
    ("protocol", ("sandbox", "runner")),
    ("sandbox", ("runner", *JUDGE_SIDE)),
    ("probes", ("runner", *JUDGE_SIDE)),
    ("reports", BENEATH_REPORTS),
    *((name, (*BENEATH_REPORTS, "reports")) for name in HELP),
    *((name, (*BENEATH_REPORTS, "reports", *HELP)) for name in FOUNDATION),
)
"""(the modules under this name, the names they may not import), relative to the package."""

ONLY_FROM: tuple[tuple[str, tuple[str, ...]], ...] = (("commands", ("cli", "commands")),)
"""(a name, the only modules that may import it), relative to the package."""


def _module_name(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package.name, *parts])


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, module name) of every import in the file `path`, whose module is `module`:
    relative imports resolved; `from a import b` counts as both `a` and `a.b` (b may be a
    module)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def layer_violations(package: Path) -> list[str]:
    """Each import that breaks `RULES` or `ONLY_FROM` in the package at `package`, as
    "<module> imports <name> (line N)"."""
    root = package.name
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        module = _module_name(package, path)
        forbidden = [
            f for layer, names in RULES if _within(module, f"{root}.{layer}") for f in names
        ]
        forbidden += [
            name
            for name, importers in ONLY_FROM
            if not any(_within(module, f"{root}.{i}") for i in importers)
        ]
        for line, name in imports_of(path, module):
            if any(_within(name, f"{root}.{f}") for f in forbidden):
                found.append(f"{module} imports {name} (line {line})")
    return sorted(set(found))


def test_the_layers_import_downwards_only() -> None:
    assert layer_violations(PACKAGE) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "grader"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_every_kind_of_upward_import_is_named(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "model.py": "from grader.runner import engine\n",
            "protocol/__init__.py": "",
            "protocol/worker_messages.py": "from ..sandbox.isolation import Level\n",
            "protocol/frames.py": "def late():\n    import grader.runner.cache\n",
            "sandbox/__init__.py": "from grader import runner\n",
            "sandbox/launch.py": (
                "import importlib\n\n\ndef f():\n    importlib.import_module('grader.runner.x')\n"
            ),
            "sandbox/server.py": "from . import client\nfrom grader.protocol import wire\n",
            "sandbox/client.py": "def fail():\n    from grader.checks.failure import fail\n",
            "sandbox/public_inputs.py": "import grader.authoring\n",
            "sandbox/probes.py": "from ..suites import _shared\nfrom grader import plugin\n",
            "probes/__init__.py": "from grader.checks import failure\n",
            "probes/jit.py": "from grader.sandbox.probes import probe\nimport grader.plugin.judge\n",
            "probes/traces.py": (
                "import importlib\n\n\ndef f():\n    importlib.import_module('grader.runner.engine')\n"
            ),
            "probes/files.py": "from ..suites import test_03_jit\nfrom ..authoring import check\n",
            "runner/__init__.py": "",
            "runner/engine.py": "from grader.sandbox import launch\nfrom grader import model\n",
            "reports/__init__.py": "",
            "reports/terminal.py": "from grader import invocations, next_step\n",
            "reports/html.py": "def late():\n    from grader.runner.submission import find\n",
            "reports/junit.py": "import grader.notebooks.magic\nfrom grader.audience import shown\n",
            "hints.py": "from grader.runner.submission import Submission\n",
            "state.py": "from grader.reports import history\n",
            "notebooks/__init__.py": "",
            "notebooks/magic.py": "from grader.commands.shared import positive\n",
            "watch/display.py": "from grader import commands\n",
            "rounding.py": "from grader import settings\n",
            "catalog.py": "def late():\n    from grader.reports import labels\n",
        },
    )
    assert layer_violations(package) == [
        "grader.catalog imports grader.reports (line 2)",
        "grader.catalog imports grader.reports.labels (line 2)",
        "grader.hints imports grader.runner.submission (line 1)",
        "grader.hints imports grader.runner.submission.Submission (line 1)",
        "grader.model imports grader.runner (line 1)",
        "grader.model imports grader.runner.engine (line 1)",
        "grader.notebooks.magic imports grader.commands.shared (line 1)",
        "grader.notebooks.magic imports grader.commands.shared.positive (line 1)",
        "grader.probes imports grader.checks (line 1)",
        "grader.probes imports grader.checks.failure (line 1)",
        "grader.probes.files imports grader.authoring (line 2)",
        "grader.probes.files imports grader.authoring.check (line 2)",
        "grader.probes.files imports grader.suites (line 1)",
        "grader.probes.files imports grader.suites.test_03_jit (line 1)",
        "grader.probes.jit imports grader.plugin.judge (line 2)",
        "grader.probes.traces imports grader.runner.engine (line 5)",
        "grader.protocol.frames imports grader.runner.cache (line 2)",
        "grader.protocol.worker_messages imports grader.sandbox.isolation (line 1)",
        "grader.protocol.worker_messages imports grader.sandbox.isolation.Level (line 1)",
        "grader.reports.html imports grader.runner.submission (line 2)",
        "grader.reports.html imports grader.runner.submission.find (line 2)",
        "grader.reports.junit imports grader.audience (line 2)",
        "grader.reports.junit imports grader.audience.shown (line 2)",
        "grader.reports.junit imports grader.notebooks.magic (line 1)",
        "grader.reports.terminal imports grader.next_step (line 1)",
        "grader.rounding imports grader.settings (line 1)",
        "grader.sandbox imports grader.runner (line 1)",
        "grader.sandbox.client imports grader.checks.failure (line 2)",
        "grader.sandbox.client imports grader.checks.failure.fail (line 2)",
        "grader.sandbox.launch imports grader.runner.x (line 5)",
        "grader.sandbox.probes imports grader.plugin (line 2)",
        "grader.sandbox.probes imports grader.suites (line 1)",
        "grader.sandbox.probes imports grader.suites._shared (line 1)",
        "grader.sandbox.public_inputs imports grader.authoring (line 1)",
        "grader.state imports grader.reports (line 1)",
        "grader.state imports grader.reports.history (line 1)",
        "grader.watch.display imports grader.commands (line 1)",
    ]


def test_a_tree_that_keeps_the_rules_passes(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "levels.py": "",
            "model.py": "from grader.levels import Level\n",
            "protocol/__init__.py": "",
            "protocol/worker_messages.py": "from .records import MAX\nfrom grader import levels\n",
            "sandbox/__init__.py": "",
            "sandbox/launch.py": "from grader.protocol import wire\nfrom . import server\n",
            "sandbox/client.py": "def fail():\n    from grader.protocol.failure import fail\n",
            "probes/__init__.py": "",
            "probes/jit.py": (
                "import jax\nfrom grader.sandbox.probes import probe\nfrom . import _bound\n"
                "from grader.protocol.value_codec import ErrorInfo\n"
            ),
            "checks/__init__.py": "",
            "checks/jit.py": "from grader.probes.jit import eager_and_jitted\n",
            "checks/failure.py": "from grader.protocol.failure import fail\n",
            "suites/test_03_jit.py": "from grader.checks import jit\nfrom grader import authoring\n",
            "runner/__init__.py": "",
            "runner/engine.py": "from grader.sandbox import launch\nimport grader.protocol.worker_messages\n",
            "reports/__init__.py": "",
            "reports/terminal.py": "from grader import invocations\nfrom grader.model import Report\n",
            "invocations.py": "from grader.state import state_folder\n",
            "state.py": "from grader.hints import FIX\nfrom grader import settings\n",
            "hints.py": "from grader.settings import ShowFixes\nfrom grader.model import Report\n",
            "settings.py": "from grader import rounding\nfrom grader.errors import GraderError\n",
            "rounding.py": "from grader.model import Report\n",
            "catalog.py": "from grader.errors import GraderError\nfrom grader.model import Visibility\n",
            "audience.py": "from grader.runner.submission import Submission\nfrom grader import next_step\n",
            "cli.py": "from grader.commands import shared\n",
            "commands/__init__.py": "",
            "commands/hint.py": "from grader.commands import shared\nfrom grader import ladder\n",
            "notebooks/__init__.py": "",
            "notebooks/magic.py": "from grader.arguments import positive\nfrom grader import audience\n",
        },
    )
    assert layer_violations(package) == []


def dependencies(package: Path) -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports (as
    `imports_of` reads them). `from a import b, c` where `a.b` and `a.c` are modules depends
    on them only, not on `a`: the package is where they are found, not what is used."""
    paths = {_module_name(package, p): p for p in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        by_line: dict[int, set[str]] = {}
        for line, name in imports_of(path, module):
            by_line.setdefault(line, set()).add(name)
        used: set[str] = set()
        for names in by_line.values():
            submodules = {
                n for n in names if n in paths and any(n.startswith(m + ".") for m in names)
            }
            bases = {n for n in names if any(s.startswith(n + ".") for s in submodules)}
            everything_a_module = all(
                n in paths or any(n.startswith(b + ".") and n in paths for b in bases)
                for n in names - bases
            )
            used |= (names - bases) if everything_a_module and submodules else names
        graph[module] = {n for n in used if n in paths and n != module}
    return graph


def circles(package: Path) -> list[list[str]]:
    """The import circles of the package: each strongly connected set of two or more
    modules (Tarjan), sorted."""
    graph = dependencies(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_module_imports_itself_through_others() -> None:
    assert circles(PACKAGE) == []


def test_an_import_circle_is_named_with_its_modules(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        {
            "__init__.py": "def hook():\n    from grader.feature import entry\n",
            "feature/__init__.py": "",
            "feature/entry.py": "from grader.feature import helper\n",
            "feature/helper.py": "import grader\n",
            "plugin/__init__.py": "",
            "plugin/gates.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from grader.plugin.outcomes import Outcome\n",
            "plugin/outcomes.py": "from grader.plugin.gates import closed_by\n",
        },
    )
    assert circles(package) == [
        ["grader", "grader.feature.entry", "grader.feature.helper"],
        ["grader.plugin.gates", "grader.plugin.outcomes"],
    ]
    (package / "feature" / "helper.py").write_text("from grader import version\n")
    (package / "version.py").write_text("")
    (package / "plugin" / "gates.py").write_text("")
    assert circles(package) == []
