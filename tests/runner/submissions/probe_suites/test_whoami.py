"""A suite for the runner's tests: where the sandbox runs, and what it can reach.

The judge knows the level it was asked for (`--grader-isolation`) and its record
pipe (`--grader-records-fd`); the lesson file reports what the sandbox sees.
"""

LESSON = "whoami"
TITLE = "Where the sandbox runs"
TIMEOUT = 60

import os

from grader.authoring import check


@check("the sandbox runs at the level the runner asked for", points=1, hint="-")
def test_level(student, request):
    level = request.config.getoption("grader_isolation")
    uid, pid_ns, net_ns = student.ids()
    assert (uid == os.getuid()) == (level == "basic"), (level, uid)
    assert (pid_ns == os.readlink("/proc/self/ns/pid")) == (level != "strict"), (level, pid_ns)
    assert (net_ns == os.readlink("/proc/self/ns/net")) == (level != "strict"), (level, net_ns)


@check("the sandbox does not hold the judge's record pipe", points=1, hint="-")
def test_record_pipe(student, request):
    fd = request.config.getoption("grader_records_fd")
    assert fd is not None, "the runner gives the judge a record pipe"
    pipe = os.fstat(fd)
    assert [pipe.st_dev, pipe.st_ino] not in student.open_files()


@check("the sandbox runs on the judge's share of the cores, with few malloc arenas", points=1, hint="-")
def test_thread_budget(student):
    from grader.runner import budget

    share = os.environ["NPROC"]
    assert 1 <= int(share) <= budget.cpus(), share
    want = {name: share for name in budget.THREAD_VARIABLES}
    want["MALLOC_ARENA_MAX"] = str(budget.MALLOC_ARENAS)
    assert student.budget() == want, (student.budget(), want)
