"""Public code of ex5_grad_clipping: the probe that runs the student's
`plot_grad_norms` in the sandbox and reports what it drew and wrote.

The judge never opens a file the sandbox wrote: the probe reads the PNG (a regular
file only, size capped) and decodes its pixels here, and it records every matplotlib
Figure saved meanwhile (`plt.savefig` goes through `Figure.savefig`) as plain data:
per axes its labels, the y values of its lines and its legends' entries. The suite
judges that data and
attaches the PNG bytes (validated again in the judge) to the report.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from grader.probes import _calls
from grader.protocol.value_codec import ErrorInfo
from grader.sandbox.probes import probe

MAX_FILE_BYTES = 32 << 20
"""A plot file larger than this is reported by size only."""
MAX_AXES = 64
MAX_LINES = 256
"""Axes (over all saved figures) and lines per axes reported."""


@contextmanager
def _recorded_figures() -> Iterator[list[Any]]:
    """Every matplotlib Figure saved meanwhile (plt.savefig goes through Figure.savefig)."""
    from matplotlib.figure import Figure

    saved: list[Any] = []
    original = Figure.savefig

    def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved.append(self)
        return original(self, *args, **kwargs)

    Figure.savefig = recording  # type: ignore[method-assign]
    try:
        yield saved
    finally:
        Figure.savefig = original  # type: ignore[method-assign]


def _read_regular(path: str) -> tuple[bytes, int]:
    """(the first MAX_FILE_BYTES + 1 bytes, the size) of a regular file at `path`;
    (b"", 0) when there is none (no file, a folder, a FIFO, a device)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b"", 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"", 0
        chunks, left = [], MAX_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), int(info.st_size)
    finally:
        os.close(fd)


def _pixels(data: bytes) -> tuple[np.ndarray[Any, Any] | None, str]:
    """The decoded PNG (as matplotlib.image.imread gives it), or why it cannot be read."""
    import matplotlib.image

    try:
        img = np.asarray(matplotlib.image.imread(io.BytesIO(data), format="png"))
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]
    if img.ndim not in (2, 3) or img.dtype.kind not in "fiu":
        return None, f"an image of shape {img.shape} and dtype {img.dtype}"
    return img, ""


def _legend_texts(ax: Any, fig: Any) -> list[str]:
    """The entries of the legends that can name an axes' lines: its own legend's and its
    figure's (`fig.legend(...)`)."""
    legends = [ax.get_legend(), *list(getattr(fig, "legends", []))]
    texts: list[str] = []
    for legend in legends:
        if legend is None:
            continue
        try:
            texts.extend(str(text.get_text()) for text in list(legend.get_texts())[:MAX_LINES])
        except Exception:  # a legend that is not matplotlib's: no entries seen
            continue
    return texts


def _axes(figures: list[Any]) -> list[list[dict[str, Any]]]:
    """Per saved figure, per axes: its x and y labels, the y values of its lines and the
    entries of the legends that name them."""
    out: list[list[dict[str, Any]]] = []
    count = 0
    for fig in figures:
        described = []
        for ax in list(fig.axes):
            if count >= MAX_AXES:
                break
            count += 1
            lines = []
            for line in list(ax.get_lines())[:MAX_LINES]:
                try:
                    lines.append(np.asarray(line.get_ydata(), np.float64))
                except (TypeError, ValueError):  # y values that are not numbers
                    continue
            described.append(
                {
                    "xlabel": str(ax.get_xlabel()),
                    "ylabel": str(ax.get_ylabel()),
                    "lines": lines,
                    "legend": _legend_texts(ax, fig),
                }
            )
        out.append(described)
    return out


@probe
def saved_plot(
    plot_fn: Callable[..., Any], with_clip: list[float], without_clip: list[float], path: str
) -> Any:
    """In the sandbox: `plot_fn(with_clip, without_clip, path)` (its folder created first),
    with the figures it saved recorded. Returns the student's error as data, or
    {"returned": the path it returned (str) or None, "returned_repr", "data": the file's
    bytes (b"" if no regular file), "size", "pixels": the decoded image or None,
    "unreadable": why not, "figures": `_axes` of the saved figures}."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _recorded_figures() as figures:
        returned = _calls.attempt(lambda: plot_fn(with_clip, without_clip, path))
        saved = list(figures)
    if isinstance(returned, ErrorInfo):
        return returned
    try:
        as_path = os.fspath(returned) if isinstance(returned, str | os.PathLike) else None
        shown = repr(returned)[:200]
    except Exception as exc:  # a hostile __fspath__ or __repr__
        as_path, shown = None, f"<{type(returned).__name__}: {type(exc).__name__}>"
    data, size = _read_regular(path)
    pixels, unreadable = _pixels(data) if data else (None, "")
    return {
        "returned": as_path if isinstance(as_path, str) else None,
        "returned_repr": shown,
        "data": data,
        "size": size,
        "pixels": pixels,
        "unreadable": unreadable,
        "figures": _axes(saved),
    }


@probe
def after_moving_global_rngs(fn: Callable[..., Any], args: tuple[Any, ...], seed: int) -> Any:
    """In the sandbox: reseed NumPy's and Python's global RNGs (to `seed`, a state no earlier
    call saw), then `fn(*args)`; the student's error comes back as data. A function whose
    randomness comes from its key alone gives what it gave before."""
    import random

    np.random.seed(seed % (2**32))
    random.seed(seed)
    return _calls.attempt(lambda: fn(*args))
