"""Generate the student stubs in exercises/ from the marked reference solutions.

`solutions/NAME.py` is the single source of every lesson file. Each graded body
is marked; the stub is the same file with each marked block replaced:

    def add_at(x, indices, values):
        \"\"\"...\"\"\"
        # TODO: scatter-add the values with `.at[indices].add(values)`
        ### BEGIN SOLUTION
        return jnp.asarray(x).at[indices].add(values)
        ### END SOLUTION

becomes, in exercises/NAME.py,

        # TODO: scatter-add the values with `.at[indices].add(values)`
        raise NotImplementedError("add_at is not implemented yet")

at the block's indentation (named after the innermost enclosing function). A
block may say what its stub is instead, with `### STUB: <line>` comment lines
inside it (in order, indented relative to the block). Blocks outside a
function (module or class level: `optimizer = ...`) MUST do so, since a
`raise` there would stop the stub from importing:

    # TODO: the lesson's optimizer: Adam with learning rate 1e-3, from optax
    ### BEGIN SOLUTION
    ### STUB: optimizer = None
    optimizer = optax.adam(1e-3)
    ### END SOLUTION

Every block sits under a `# TODO` comment (the student's instruction), which
the stub keeps; blocks do not nest. Everything outside the blocks is copied
unchanged, so docstrings and signatures cannot drift apart.

    grade assign                  write exercises/ from solutions/
    grade assign --check          exit 1 listing the files that differ
"""

from __future__ import annotations

import argparse

from grader.commands import course, shared
from grader.course.assign import MarkerError, differences, write


def add_arguments(parser: argparse.ArgumentParser) -> None:
    course.add_argument(parser)
    parser.add_argument(
        "--solutions",
        metavar="DIR",
        help="the marked reference solutions (default: the course's solutions/)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="where the stubs go (default: the course's exercises/)"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing the files that differ"
    )


def run(args: argparse.Namespace) -> int:
    solutions = course.part(args, args.solutions, "solutions")
    exercises = course.part(args, args.out, "exercises")
    try:
        if args.check:
            problems = differences(solutions, exercises)
            for problem in problems:
                print(problem)
            if problems:
                print(
                    f"\n{len(problems)} stub(s) out of sync: run `grade assign` to regenerate "
                    f"{exercises}/ from {solutions}/"
                )
                return 1
            print(f"{exercises}/ is in sync with {solutions}/")
            return 0
        changed = write(solutions, exercises)
    except MarkerError as exc:
        raise shared.UsageError(str(exc)) from None
    for path in changed:
        print(f"wrote {path}")
    print(f"{len(changed)} stub(s) changed; {exercises}/ is in sync with {solutions}/")
    return 0
