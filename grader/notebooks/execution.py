"""Run a notebook's code cells in a fresh Jupyter kernel, one outcome per cell.

The kernel (ipykernel, driven by nbclient) is started by the grading child and
so inherits its limits: memory (RLIMIT_AS), file sizes, no core dumps, the
private working folder and environment. Jupyter starts a kernel in a session
of its own, so the worker's kill of the child's process group would not reach
it: the kernel's first act is to ask Linux for SIGKILL when its parent dies
(`PR_SET_PDEATHSIG`), and the child kills the kernel's process group itself
whenever it is done with it.

Time is bounded twice. Each cell has `cell_timeout_s`; a cell still running
then is interrupted (SIGINT, as Jupyter's stop button), and when the kernel
does not come back within `interrupt_grace_s` (code stuck in XLA or C does not
see SIGINT) the kernel is restarted and the cells that had run are run again
before going on. All cells together have `budget_s`; cells left when it is
spent are not run. The cells run in notebook order; a cell that raises does
not stop the others (as "Run All" with errors allowed). Outputs are capped per
cell (a print loop must not fill the child's memory); figures and errors are
what the grader keeps from them.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grader.notebooks.source import Cell

Status = Literal["ran", "raised", "timeout", "not_run", "skipped"]
SKIP_TAG = "skip-execution"  # nbclient's tag: the cell is neither run nor graded

# Run as the kernel's command: die with the parent, then start ipykernel.
KERNEL_BOOT = (
    "import ctypes, os, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(os.environ.get('JPY_PARENT_PID') or os.getppid()):\n"
    "    os._exit(1)  # the parent is already gone\n"
    "from ipykernel.kernelapp import launch_new_instance\n"
    "launch_new_instance()\n"
)
KERNEL_ARGUMENTS = ["--HistoryManager.enabled=False", "--IPKernelApp.log_level=ERROR"]
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
MAX_STREAM_CHARS = (
    100_000  # printed text kept per cell: a print flood must not fill the child's memory
)
MAX_OUTPUTS = 50
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)")


class KernelUnavailable(Exception):
    """No kernel could be started; the message says why."""


@dataclass(frozen=True)
class Limits:
    cell_timeout_s: float
    budget_s: float
    startup_timeout_s: float = 60.0
    interrupt_grace_s: float = 3.0


@dataclass
class Outcome:
    cell: Cell
    status: Status = "not_run"
    error: str = ""  # "NameError: name 'xs' is not defined"
    where: tuple[int, int] | None = None  # (cell number, line) of the innermost notebook frame
    seconds: float = 0.0
    images: list[bytes] = field(default_factory=list)
    reason: str = ""  # why a cell was not run
    replayable: bool = False  # its effects are rebuilt when the kernel restarts


def kernel_env(base: dict[str, str], devices: int = 1) -> dict[str, str]:
    """The kernel's environment: the child's, with inline figures and the device count."""
    env = dict(base)
    env.update(
        {
            "MPLBACKEND": INLINE_BACKEND,
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "IPYTHONDIR": os.path.join(base.get("TMPDIR", "/tmp"), "ipython"),
        }
    )
    if devices > 1:
        flags = env.get("XLA_FLAGS", "")
        env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
    return env


def run(
    cells: Sequence[Cell], *, cwd: Path, env: dict[str, str], limits: Limits, log_path: Path
) -> list[Outcome]:
    """Every code cell's outcome, in order (raises KernelUnavailable when no kernel starts)."""
    return asyncio.run(_Session(cells, cwd, env, limits, log_path).run())


def _node(data: dict[str, Any]) -> Any:
    """nbclient works on nbformat's attribute-access dicts."""
    import nbformat

    return nbformat.from_dict(data)  # type: ignore[no-untyped-call]


def _code_cell(code: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "source": code,
        "metadata": {},
        "outputs": [],
        "execution_count": None,
    }


def _kernel_specs() -> Any:
    """The kernel specs of the grader's one kernel: this Python, started by `KERNEL_BOOT`."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class Specs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[sys.executable, "-c", KERNEL_BOOT, "-f", "{connection_file}"],
                display_name="grader",
                language="python",
            )

    return Specs()


def _client_class() -> Any:
    """nbclient's `NotebookClient`, keeping only the outputs `_kept` allows."""
    from nbclient import NotebookClient

    class Client(NotebookClient):
        """nbclient, keeping at most MAX_STREAM_CHARS of printed text and MAX_OUTPUTS outputs per cell."""

        def output(
            self, outs: list[Any], msg: dict[str, Any], display_id: str | None, cell_index: int
        ) -> Any:
            if not _kept(outs, msg):
                return None
            return super().output(outs, msg, display_id, cell_index)

    return Client


def _kept(outs: list[Any], msg: dict[str, Any]) -> bool:
    """Whether the output `msg` is kept after a cell's outputs `outs` so far: an error always;
    another within `MAX_OUTPUTS` outputs, printed text within `MAX_STREAM_CHARS`."""
    if len(outs) >= MAX_OUTPUTS and msg.get("msg_type") != "error":
        return False
    return not (
        msg.get("msg_type") == "stream"
        and sum(len(o.get("text", "")) for o in outs if o.get("output_type") == "stream")
        > MAX_STREAM_CHARS
    )


class _Session:
    def __init__(
        self, cells: Sequence[Cell], cwd: Path, env: dict[str, str], limits: Limits, log_path: Path
    ) -> None:
        self.outcomes = [Outcome(c) for c in cells]
        self.cwd, self.env, self.limits, self.log_path = cwd, env, limits, log_path
        self.deadline = 0.0
        self.by_count: dict[int, int] = {}  # execution count in this kernel -> cell number

    async def run(self) -> list[Outcome]:
        from jupyter_client.manager import AsyncKernelManager

        nb = _node(
            {
                "cells": [_code_cell(o.cell.code) for o in self.outcomes],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
        km = AsyncKernelManager(kernel_name="grader", kernel_spec_manager=_kernel_specs())
        client = _client_class()(
            nb,
            km=km,
            kernel_name="grader",
            allow_errors=True,
            interrupt_on_timeout=False,
            shutdown_kernel="immediate",
            startup_timeout=int(self.limits.startup_timeout_s),
            timeout=max(1, int(self.limits.cell_timeout_s)),
            record_timing=False,
            extra_arguments=KERNEL_ARGUMENTS,
            skip_cells_with_tag=SKIP_TAG,
        )
        with open(self.log_path, "ab") as log:
            try:
                async with client.async_setup_kernel(
                    cwd=str(self.cwd), env=self.env, stdout=subprocess.DEVNULL, stderr=log
                ):
                    self.deadline = time.monotonic() + self.limits.budget_s
                    await self._run_all(client, km, nb.cells)
            except KernelUnavailable:
                raise
            except Exception as exc:  # a kernel that cannot start, whatever the reason
                if not any(o.status != "not_run" for o in self.outcomes):
                    raise KernelUnavailable(f"{type(exc).__name__}: {exc}") from None
            finally:
                await _kill(km)
        return self.outcomes

    async def _run_all(self, client: Any, km: Any, nb_cells: list[Any]) -> None:
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        for index, (outcome, nb_cell) in enumerate(zip(self.outcomes, nb_cells, strict=True)):
            if SKIP_TAG in outcome.cell.tags:
                outcome.status, outcome.reason = "skipped", f"tagged `{SKIP_TAG}`"
                continue
            remaining = self.deadline - time.monotonic()
            if remaining < 1:
                outcome.reason = (
                    f"the notebook's time budget ({self.limits.budget_s:g} s) was spent"
                )
                continue
            client.timeout = max(1, int(min(self.limits.cell_timeout_s, remaining)))
            started = time.monotonic()
            try:
                await client.async_execute_cell(nb_cell, index)
            except CellTimeoutError:
                outcome.status, outcome.seconds = "timeout", time.monotonic() - started
                await _stop_pollers()
                if not await self._recover(
                    client,
                    km,
                    restart=not await _interrupted(client, km, self.limits.interrupt_grace_s),
                ):
                    return
                continue
            except DeadKernelError:
                await _stop_pollers()
                outcome.status, outcome.replayable = "raised", False
                outcome.error = (
                    "the kernel died while running this cell (killed: memory ran out, "
                    "or native code crashed)"
                )
                outcome.seconds = time.monotonic() - started
                if not await self._recover(client, km, restart=True):
                    return
                continue
            outcome.seconds = time.monotonic() - started
            self._judge(outcome, nb_cell)

    def _judge(self, outcome: Outcome, nb_cell: Any) -> None:
        count = nb_cell.get("execution_count")
        if isinstance(count, int):
            self.by_count[count] = outcome.cell.number
        outcome.status, outcome.replayable = "ran", True
        for output in nb_cell.get("outputs", []):
            if output.get("output_type") == "error":
                outcome.status = "raised"
                outcome.error = f"{output.get('ename', 'Error')}: {_clean(str(output.get('evalue', '')))}".rstrip(
                    ": "
                )
                outcome.where = self._frame(output.get("traceback", []))
            png = output.get("data", {}).get("image/png")
            if isinstance(png, str):
                with contextlib.suppress(binascii.Error, ValueError):
                    outcome.images.append(base64.b64decode(png))

    def _frame(self, traceback: list[str]) -> tuple[int, int] | None:
        frames = _CELL_FRAME.findall(_clean("\n".join(str(t) for t in traceback)))
        for count, line in reversed(frames):
            if int(count) in self.by_count:
                return self.by_count[int(count)], int(line)
        return None

    async def _recover(self, client: Any, km: Any, *, restart: bool) -> bool:
        """After a timeout or a crash: a kernel in the state the cells so far left, or False."""
        if not restart:
            return True
        remaining = self.deadline - time.monotonic()
        if remaining < 2:
            self._not_run_rest("the notebook's time budget was spent restarting the kernel")
            return False
        try:
            await km.restart_kernel(now=True)
            await client.kc.wait_for_ready(timeout=min(self.limits.startup_timeout_s, remaining))
        except Exception:
            self._not_run_rest("the kernel could not be restarted after the cell above")
            return False
        self.by_count.clear()

        for outcome in self.outcomes:
            if not outcome.replayable:
                continue
            replay = _node(_code_cell(outcome.cell.code))
            remaining = self.deadline - time.monotonic()
            client.timeout = max(1, int(min(self.limits.cell_timeout_s, remaining)))
            try:
                await client.async_execute_cell(replay, 0)
            except Exception:
                self._not_run_rest("re-running the earlier cells in a restarted kernel failed")
                return False
            count = replay.get("execution_count")
            if isinstance(count, int):
                self.by_count[count] = outcome.cell.number
        return True

    def _not_run_rest(self, reason: str) -> None:
        for outcome in self.outcomes:
            if outcome.status == "not_run" and not outcome.reason:
                outcome.reason = reason


async def _stop_pollers() -> None:
    """Cancel nbclient's per-cell tasks left running by a timeout.

    On a timeout nbclient leaves the cell's IOPub reader running; it would take
    (and drop) the next cell's outputs, so it goes before anything else runs.
    """
    current = asyncio.current_task()
    stale = [
        task
        for task in asyncio.all_tasks()
        if task is not current
        and not task.done()
        and "_async_poll" in getattr(task.get_coro(), "__qualname__", "")
    ]
    for task in stale:
        task.cancel()
    await asyncio.gather(*stale, return_exceptions=True)


async def _interrupted(client: Any, km: Any, grace_s: float) -> bool:
    """Interrupt the kernel; True when it answers again within `grace_s`."""
    try:
        await km.interrupt_kernel()
        msg_id = client.kc.kernel_info()
        deadline = time.monotonic() + grace_s
        while (remaining := deadline - time.monotonic()) > 0:
            reply = await client.kc.shell_channel.get_msg(timeout=remaining)
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return True
    except Exception:
        return False
    return False


async def _kill(km: Any) -> None:
    """The kernel's whole process group goes, whatever state it is in."""
    try:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
    except Exception:
        pass


def _clean(text: str) -> str:
    return _ANSI.sub("", text)
