"""An automated grader for the "Introduction to JAX" lesson.

In IPython or Jupyter, `%load_ext grader` adds the `%grade` magic
(`grader.notebooks.magic`): the lesson graded from the cells the kernel ran.
"""

from __future__ import annotations

from typing import Any

from grader.version import __version__

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext grader`: register `%grade` (imported only then: `grade` does not need it)."""
    from grader.notebooks import magic

    magic.load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from grader.notebooks import magic

    magic.unload(ipython)
