"""Which threads count as "left running beside the module" (grader.sandbox.server): a
library's idle or library-only pool worker does not (orbax keeps one); a thread running
code that is not the installation's does."""

from __future__ import annotations

import concurrent.futures
import sys
import threading
import time

from grader.sandbox import server


def _counted(thread_id: int) -> bool:
    return not server.idle_pool_worker(sys._current_frames()[thread_id])


def test_an_idle_pool_worker_is_not_counted_and_a_busy_one_is() -> None:
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        pool.submit(int).result()
        (worker,) = [t.ident for t in pool._threads if t.ident is not None]
        time.sleep(0.05)
        assert not _counted(worker)  # waiting for work
        release = threading.Event()
        pool.submit(lambda: release.wait(5))  # code of this file, not the installation's
        time.sleep(0.05)
        assert _counted(worker)
        release.set()
    finally:
        pool.shutdown(wait=True)


def test_a_plain_thread_is_counted() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(5,))
    thread.start()
    try:
        assert thread.ident is not None and _counted(thread.ident)
    finally:
        release.set()
        thread.join()
