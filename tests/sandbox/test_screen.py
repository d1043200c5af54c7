"""screen: the judge's reading of a lesson file before it credits an observation."""

from pathlib import Path

import pytest

from grader.sandbox import screen

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "solutions").glob("*.py"))
    + sorted((ROOT / "exercises").glob("*.py"))
    + sorted((ROOT / "tests" / "fixtures").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_lesson_files_are_not_flagged(path):
    assert screen.findings(path.read_bytes()) == []


@pytest.mark.parametrize(
    ("source", "phrase"),
    [
        ("import jax\njax.make_jaxpr = lambda f: f\n", "assigns into the module `jax`"),
        ("import jax.numpy as jnp\njnp.where = None\n", "assigns into the module `jax`"),
        ("import jax\nm = jax\nm.jit = None\n", "assigns into the module `jax`"),
        ("import jax\ne = jax.export\ne.export = None\n", "assigns into the module `jax`"),
        ("from grader.sandbox import probes\n", "imports the grader itself"),
        ("import threading\n", "starts threads"),
        ("import _thread\n", "starts threads"),
        ("from concurrent.futures import ThreadPoolExecutor\n", "concurrent"),
        ("import gc\n", "`gc`"),
        ("import sys\nsys.modules['jax'].jit = None\n", "`sys.modules`"),
        ("import sys\nf = sys._getframe()\n", "`sys._getframe`"),
        ("import sys\nt = sys.exc_info()[2]\n", "`sys.exc_info`"),
        ("def f(g):\n    return g.__globals__\n", "`.__globals__`"),
        ("def f(e):\n    return e.__traceback__.tb_frame.f_back\n", "machinery"),
        ("x = getattr(object, '__subclasses__')\n", "`__subclasses__`"),
        ("import jax\nname = 'jit'\nf = getattr(jax, name)\n", "computed name"),
        ("setattr(object, 'x', 1)\n", "`setattr`"),
        ("exec('x = 1')\n", "`exec`"),
        ("m = __import__('jax')\n", "`__import__`"),
        ("from jax._src import api\n", "private"),
        ("import jax\napi = jax._src\n", "private part of `jax`"),
        ("import os\nos.fork()\n", "`os.fork`"),
        ("def f(:\n", "does not parse"),
    ],
)
def test_tampering_is_found_with_its_line(source, phrase):
    found = screen.findings(source.encode())
    assert found, source
    assert phrase in screen.message(found), screen.message(found)
    assert all(f.line >= 1 for f in found)


def test_ordinary_code_is_left_alone():
    source = b"""
import os
import functools
import jax
import jax.numpy as jnp
import numpy as np

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
CACHE = {}


def _key_name(entry):
    for attr in ("key", "idx", "name"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return entry.__class__.__name__


@functools.partial(jax.jit, static_argnames=("n",))
def f(x, n):
    CACHE["x"] = x
    return jnp.sum(x) * n + np.pi


if __name__ == "__main__":
    import threading
    from grader.data import load_data
"""
    assert screen.findings(source) == []


def test_no_source_is_no_credit():
    assert "did not receive" in screen.message(screen.findings(None))
    assert "larger" in screen.message(screen.findings(b"#" * (screen.MAX_SOURCE_BYTES + 1)))


def test_a_notebook_module_is_screened_by_its_cells() -> None:
    """A lesson file built from a notebook imports the grader's `exec_cells` itself: its
    cells are what runs, so they are what is screened (the setup cell left out)."""
    from grader.notebooks import session
    from grader.notebooks.export import SETUP_CELL

    cells = ["", "import jax.numpy as jnp", "def f(x): return jnp.sin(x)", "%load_ext grader"]
    clean = session.from_history("03_jit", cells, set(), {"f"})
    assert clean is not None and screen.findings(clean.text.encode()) == []
    setup = session.from_history(
        "03_jit", [*cells, SETUP_CELL.format(install="jax-lesson-grader")], set(), {"f"}
    )
    assert setup is not None and screen.findings(setup.text.encode()) == []
    tampering = session.from_history("03_jit", [*cells, "import gc"], set(), {"f"})
    assert tampering is not None
    (found,) = screen.findings(tampering.text.encode())
    assert str(found) == "cell 4, line 1: reaches every live object (`gc`)"
    forged = clean.text.replace("del _exec_cells", "import grader.sandbox\ndel _exec_cells")
    assert any("grader" in str(f) for f in screen.findings(forged.encode()))
