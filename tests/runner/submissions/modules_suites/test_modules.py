"""A suite for the runner's tests: what the sandbox has imported when the student's module is.

The judge writes the lesson's list to its own working folder, where the test reads it
(tests/runner/test_sandbox_modules.py): the test decides, not this suite.
"""

LESSON = "modules"
TITLE = "What the sandbox holds"
TIMEOUT = 120

import json

from grader.authoring import check


@check("the sandbox's modules are written down for the test", points=1, hint="-")
def test_modules(student):
    with open("sandbox_modules.json", "w", encoding="utf-8") as fh:  # the judge's cwd
        json.dump(list(student.LOADED), fh)
