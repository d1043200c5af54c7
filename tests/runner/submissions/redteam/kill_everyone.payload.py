# Class: kill the judge, the worker and the parent; write into the installed grader.
# Targets only what the test hands it (REDTEAM_TARGETS, written in front of this payload): its
# parent, the decoy processes the test started, the installed grader. It runs only at the
# levels that confine it (another user, and at `strict` another pid namespace).
import os
import signal

for _pid in (os.getppid(), *REDTEAM_TARGETS["pids"]):  # noqa: F821 (written in front by the test)
    try:
        os.kill(_pid, signal.SIGKILL)
    except Exception:
        pass
try:
    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
except Exception:
    pass
for _dir, _dirs, _files in os.walk(REDTEAM_TARGETS["grader"]):  # noqa: F821
    for _name in _files:
        if _name.endswith(".py"):
            try:
                with open(os.path.join(_dir, _name), "a") as _fh:
                    _fh.write("\nraise SystemExit('tampered by a submission')\n")
            except Exception:
                pass
RETURN_INSTEAD = 0.0
