"""Public inputs of 05_pytrees: the namedtuple the suite's generated trees nest.

A namedtuple crosses between judge and sandbox as itself only when both sides know
its class (see `grader.protocol.value_codec`): defined here, `Pair` is the same class in
the judge and in the sandbox, so `params`, `grads` and the student's result all hold
one type, as they would in a single process.
"""

from typing import Any, NamedTuple


class Pair(NamedTuple):
    first: Any
    second: Any
