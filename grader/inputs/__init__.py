"""Public inputs: functions and objects the judge hands to student code, one module per lesson.

Registered with `grader.sandbox.public_inputs.public` (or `factory`) and named in suites
with `client.Public("name", *args)`. The sandbox builds them from here, never from
a suite: nothing in this package is hidden, and no reference solution lives here.
"""
