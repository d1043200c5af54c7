"""source_screen: the judge's reading of a lesson file before it credits an observation."""

from pathlib import Path

import pytest

from grader.sandbox import source_screen

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "solutions").glob("*.py"))
    + sorted((ROOT / "exercises").glob("*.py"))
    + sorted((ROOT / "tests" / "fixtures").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_lesson_files_are_not_flagged(path):
    assert source_screen.findings(path.read_bytes()) == []


# Ordinary habits of correct lesson files: none reaches the probes or the grader.
ORDINARY = {
    "future import": "from __future__ import annotations\nimport jax\n",
    "find_spec": "import importlib.util\nHAS_FLAX = importlib.util.find_spec('flax') is not None\n",
    "find_spec imported": "from importlib.util import find_spec\nok = find_spec('equinox')\n",
    "find_spec in a loop": "import importlib.util\n"
    "missing = [m for m in ('flax', 'equinox') if importlib.util.find_spec(m) is None]\n",
    "import_module literal": "import importlib\noptax = importlib.import_module('optax')\n",
    "metadata": "from importlib import metadata\nv = metadata.version('jax')\n",
    "metadata module": "import importlib.metadata as md\nv = md.version('jax')\n",
    "inspect.signature": "import inspect\n"
    "def arity(f):\n    return len(inspect.signature(f).parameters)\n",
    "inspect predicates": "import inspect\nok = inspect.isfunction(len) or inspect.getsource(len)\n",
    "traceback.print_exc": "import traceback\n"
    "try:\n    import flax\nexcept ImportError:\n    traceback.print_exc()\n",
    "traceback.format_exc": "import traceback\n"
    "def safe(f):\n    try:\n        return f()\n    except Exception as e:\n"
    "        traceback.print_exception(e)\n        return traceback.format_exc()\n",
    "stderr print": "import sys\nprint('loss', 1.0, file=sys.stderr)\nsys.stderr.flush()\n",
    "stdout write": "import sys\nsys.stdout.write('hi\\n')\n",
    "version and argv": "import sys\nif sys.version_info < (3, 10):\n    raise SystemExit(sys.argv)\n",
    "sys.path for a helper": "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n",
    "setattr on self": "class Config:\n    def __init__(self, **kw):\n"
    "        for name, value in kw.items():\n            setattr(self, name, value)\n"
    "    def get(self, name):\n        return getattr(self, name, None)\n",
    "__dict__ of self": "class C:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n",
    "frozen dataclass": "from dataclasses import dataclass, field, fields\n"
    "@dataclass(frozen=True)\nclass Hp:\n    lr: float = 0.1\n    sizes: list = field(default_factory=list)\n"
    "    def __post_init__(self):\n        object.__setattr__(self, 'lr', float(self.lr))\n"
    "names = [f.name for f in fields(Hp)] + list(Hp.__dataclass_fields__)\n",
    "annotations and slots": "class P:\n    __slots__ = ('w', 'b')\n    w: float\n"
    "hints = P.__annotations__\nprint(P.__name__, P.__module__, P.__doc__)\n",
    "typing": "from typing import Any, Callable, NamedTuple, TypeVar\nT = TypeVar('T')\n"
    "class Batch(NamedTuple):\n    x: Any\n    y: Any\nF = Callable[[T], T]\n",
    "logging": "import logging\nlogger = logging.getLogger(__name__)\n"
    "logging.basicConfig(level=logging.INFO)\nlogger.info('start %s', 1)\n",
    "functools": "import functools, jax\n@functools.partial(jax.jit, static_argnames=('n',))\n"
    "def f(x, n):\n    return x * n\n@functools.lru_cache\ndef g(n):\n    return n\n",
    "jax.debug.print": "import jax\n@jax.jit\ndef f(x):\n"
    "    jax.debug.print('x = {x}', x=x)\n    return x\n",
    "jax config": "import jax\njax.config.update('jax_enable_x64', True)\n",
    "XLA flags": "import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n",
    "plot settings": "import matplotlib.pyplot as plt\nplt.rcParams['figure.dpi'] = 100\n",
    "class name": "def kind(x):\n    return x.__class__.__name__ + type(x).__qualname__\n",
    "own compile": "def compile(model):\n    return model\nm = compile(1)\n",
    "recursion limit": "import sys\nsys.setrecursionlimit(10_000)\n",
    "warnings and contextlib": "import contextlib, warnings\nwarnings.filterwarnings('ignore')\n"
    "with contextlib.suppress(ValueError):\n    pass\n",
    "main demo listing globals()": "import inspect\ndef f(x):\n    return x\n"
    "if __name__ == '__main__':\n    from grader.data import load_data\n"
    "    print([n for n, v in globals().items() if inspect.isfunction(v)])\n",
    "main demo": "import sys, traceback\ndef f(x):\n    return x\n"
    "if __name__ == '__main__':\n    import threading, gc\n    try:\n        f(1)\n"
    "    except Exception:\n        traceback.print_exc()\n        print(sys.exc_info(), file=sys.stderr)\n",
}


@pytest.mark.parametrize("source", ORDINARY.values(), ids=ORDINARY.keys())
def test_ordinary_habits_are_left_alone(source):
    assert source_screen.findings(source.encode()) == [], source_screen.message(
        source_screen.findings(source.encode())
    )


# What reaches the probes or the grader; the construct is on the source's last line.
TAMPERING = [
    # the grader's modules, or a module named at run time
    ("from grader.sandbox import probes\n", "imports the grader itself (`grader.sandbox`)"),
    ("import grader.probes._bound as b\n", "imports the grader itself"),
    ("import importlib\nm = importlib.import_module('grader.probes')\n", "the grader itself"),
    ("import importlib\nname = 'jax'\nm = importlib.import_module(name)\n", "computed name"),
    ("from importlib import import_module\nm = import_module(n)\n", "computed name"),
    ("m = __import__('jax')\n", "`__import__`"),
    ("import importlib, jax\nimportlib.reload(jax)\n", "`importlib.reload`"),
    ("import importlib.util\nm = importlib.util.module_from_spec(s)\n", "loads a module"),
    ("import __main__\n", "main module"),
    # frames and their globals
    ("import sys\nf = sys._getframe()\n", "`sys._getframe`"),
    ("import sys\nt = sys.exc_info()[2]\n", "`sys.exc_info`"),
    *[
        (f"import inspect\nx = inspect.{name}()\n", f"`inspect.{name}`")
        for name in (
            "currentframe",
            "stack",
            "trace",
            "getouterframes",
            "getinnerframes",
            "getframeinfo",
            "getargvalues",
            "getgeneratorlocals",
            "getcoroutinelocals",
            "getclosurevars",
            "getmembers",
            "getmodule",
        )
    ],
    ("from inspect import currentframe as here\n", "`inspect.currentframe`"),
    ("import traceback\nx = list(traceback.walk_stack(None))\n", "`traceback.walk_stack`"),
    ("import traceback\nx = traceback.walk_tb(tb)\n", "`traceback.walk_tb`"),
    ("def f(e):\n    return e.tb_frame.f_back.f_globals\n", "`.f_back`"),
    ("def f(g):\n    return g.gi_frame\n", "`.gi_frame`"),
    ("def f(e):\n    return e.__traceback__\n", "`.__traceback__`"),
    ("def f(g):\n    return g.__globals__\n", "`.__globals__`"),
    ("def f(g):\n    return getattr(g, '__globals__')\n", "`__globals__`"),
    ("x = object.__subclasses__()\n", "`.__subclasses__`"),
    ("b = print.__self__\n", "`.__self__`"),
    ("b = __builtins__\n", "`__builtins__`"),
    # the import system and the interpreter's hooks
    ("import sys\nsys.modules['jax'].jit = None\n", "`sys.modules`"),
    ("import sys\nsys.meta_path.insert(0, object())\n", "`sys.meta_path`"),
    ("import sys\nsys.path_hooks.append(f)\n", "`sys.path_hooks`"),
    ("from importlib import machinery\n", "`importlib.machinery`"),
    ("import importlib.abc\n", "`importlib.abc`"),
    ("import sys\nsys.settrace(f)\n", "`sys.settrace`"),
    ("import sys\nsys.setprofile(f)\n", "`sys.setprofile`"),
    ("import sys\nsys.monitoring.use_tool_id(3, 'x')\n", "`sys.monitoring`"),
    ("import sys\nsys.addaudithook(f)\n", "`sys.addaudithook`"),
    ("import pdb\n", "`pdb`"),
    ("breakpoint()\n", "`breakpoint`"),
    # threads, processes, signals, finalizers, the captured stream
    ("import threading\n", "starts threads"),
    ("import _thread\n", "starts threads"),
    ("from concurrent.futures import ThreadPoolExecutor\n", "concurrent"),
    ("import multiprocessing\n", "`multiprocessing`"),
    ("import asyncio\n", "`asyncio`"),
    ("import subprocess\n", "`subprocess`"),
    ("import signal\n", "`signal`"),
    ("import os\nos.fork()\n", "`os.fork`"),
    ("import os\nos.kill(1, 9)\n", "`os.kill`"),
    ("class A:\n    def __del__(self): pass\n", "`__del__`"),
    ("import weakref\nweakref.finalize(o, f)\n", "`weakref.finalize`"),
    ("import weakref\nr = weakref.ref(o, f)\n", "`weakref.ref`"),
    ("import contextlib, io\nc = contextlib.redirect_stdout(io.StringIO())\n", "redirect_stdout"),
    # the collector and C
    ("import gc\n", "`gc`"),
    ("import ctypes\n", "`ctypes`"),
    ("import cffi\n", "`cffi`"),
    ("import builtins\n", "`builtins`"),
    # code from strings, names computed into modules
    ("exec('x = 1')\n", "`exec`"),
    ("x = eval('1')\n", "`eval`"),
    ("c = compile('1', 'f', 'eval')\n", "`compile`"),
    ("import jax\nname = 'jit'\nf = getattr(jax, name)\n", "computed name"),
    ("import jax\nd = vars(jax)\n", "namespace of `jax`"),
    ("import jax\nf = jax.__getattribute__(name)\n", "computed name"),
    ("import jax\njax.config.update('jax_disable_jit', True)\n", "`jax_disable_jit`"),
    ("from jax import config\nconfig.update(flag, True)\n", "JAX option by a computed name"),
    ("f = open('/proc/self/mem', 'r+b')\n", "a process's memory"),
    ("import numpy as np\nd = np.__dict__\n", "namespace of `numpy`"),
    ("from jax._src import api\n", "private"),
    ("import jax\napi = jax._src\n", "private part of `jax`"),
    # writing into an imported module
    ("import jax\njax.make_jaxpr = lambda f: f\n", "assigns into the module `jax`"),
    ("import jax.numpy as jnp\njnp.where = None\n", "assigns into the module `jax`"),
    ("import jax\nm = jax\nm.jit = None\n", "assigns into the module `jax`"),
    ("import jax\ne = jax.export\ne.export = None\n", "assigns into the module `jax`"),
    ("import importlib\nm = importlib.import_module('jax')\nm.jit = None\n", "module `jax`"),
    ("import jax\ndel jax.jit\n", "assigns into the module `jax`"),
    ("import jax\nsetattr(jax, 'jit', None)\n", "sets an attribute of the module `jax`"),
    ("import numpy as np\nobject.__setattr__(np, 'sum', None)\n", "module `numpy`"),
    ("import sys, io\nsys.stdout = io.StringIO()\n", "assigns into the module `sys`"),
    ("import sys\nsys.stderr = None\n", "assigns into the module `sys`"),
    # a `__main__` block that runs when graded
    ("__name__ = '__main__'\nif __name__ == '__main__':\n    import gc\n", "`gc`"),
    ("globals()['__name__'] = '__main__'\nif __name__ == '__main__':\n    import gc\n", "`gc`"),
    ("def f(:\n", "does not parse"),
    # code the grader does not read: from files, archives, strings, compiled blobs
    ("import runpy\n", "`runpy`"),
    ("import code\n", "`code`"),
    ("from codeop import compile_command\n", "`codeop`"),
    ("import zipimport\n", "`zipimport`"),
    ("import marshal\n", "`marshal`"),
]


@pytest.mark.parametrize(("source", "phrase"), TAMPERING, ids=[s for s, _ in TAMPERING])
def test_tampering_is_found_with_its_line(source, phrase):
    found = source_screen.findings(source.encode())
    assert found, source
    last = len(source.splitlines())
    named = [f for f in found if phrase in f.what]
    assert named, source_screen.message(found)
    assert {f.line for f in named} == {last}, source_screen.message(found)


def test_no_source_is_no_credit():
    assert "did not receive" in source_screen.message(source_screen.findings(None))
    assert "larger" in source_screen.message(
        source_screen.findings(b"#" * (source_screen.MAX_SOURCE_BYTES + 1))
    )


def test_a_notebook_module_is_screened_by_its_cells() -> None:
    """A lesson file built from a notebook imports the grader's `exec_cells` itself: its
    cells are what runs, so they are what is screened (the setup cell left out)."""
    from grader.notebooks import kernel
    from grader.notebooks.from_lesson import SETUP_CELL

    cells = ["", "import jax.numpy as jnp", "def f(x): return jnp.sin(x)", "%load_ext grader"]
    clean = kernel.from_history("03_jit", cells, set(), {"f"})
    assert clean is not None and source_screen.findings(clean.text.encode()) == []
    setup = kernel.from_history(
        "03_jit", [*cells, SETUP_CELL.format(install="jax-lesson-grader")], set(), {"f"}
    )
    assert setup is not None and source_screen.findings(setup.text.encode()) == []
    tampering = kernel.from_history("03_jit", [*cells, "import gc"], set(), {"f"})
    assert tampering is not None
    (found,) = source_screen.findings(tampering.text.encode())
    assert str(found) == "cell 4, line 1: reaches every live object (`gc`)"
    forged = clean.text.replace("del _exec_cells", "import grader.sandbox\ndel _exec_cells")
    assert any("grader" in str(f) for f in source_screen.findings(forged.encode()))


def test_imports_are_listed_with_their_lines():
    source = (
        b"import os, numpy.linalg\nfrom ex1_dropout import dropout\nimport importlib\n"
        b"m = importlib.import_module('ex2_per_example_grads')\nfrom . import x\n"
    )
    assert source_screen.imported(source) == [
        (1, "os"),
        (1, "numpy"),
        (2, "ex1_dropout"),
        (3, "importlib"),
        (4, "ex2_per_example_grads"),
    ]


def test_a_lesson_file_the_module_imports_is_screened_too(tmp_path):
    """Another lesson file runs in the sandbox's process when imported: the judge reads it
    from its own copy of the lesson files (which the sandbox cannot write) and screens it."""
    import socket

    from grader.sandbox import client

    (tmp_path / "ex1_dropout.py").write_text("def dropout(k, x, r):\n    return x\n")
    (tmp_path / "ex2_per_example_grads.py").write_text("import ex1_dropout\nimport gc\n")
    judge_end, sandbox_end = socket.socketpair()
    try:
        channel = client.Channel(judge_end)
        channel.lessons = str(tmp_path)
        channel.source = b"import jax\nfrom ex1_dropout import dropout\n"
        assert channel.tampering() == []  # an ordinary lesson file imported: nothing found
        channel = client.Channel(judge_end)
        channel.lessons = str(tmp_path)
        channel.source = b"import jax\n\nimport ex2_per_example_grads\n"
        found = channel.tampering()
        assert [f.line for f in found] == [3], found
        assert "imports `ex2_per_example_grads.py`, whose line 2: reaches every live object" in (
            found[0].what
        )
    finally:
        judge_end.close()
        sandbox_end.close()
