"""A lesson that reports what the sandbox holds when it imports it (test_sandbox_modules)."""

import sys

LOADED = sorted(m for m in sys.modules if m.partition(".")[0] == "grader" or "test_" in m)
