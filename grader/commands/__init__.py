"""Instructor and CI commands of `grade`, one module per command.

Each module has a docstring (its `--help` text), `add_arguments(parser)` and
`run(args) -> int`, and is registered with one line in `grader.cli.COMMANDS`:

    assign             stubs in exercises/ generated from the marked solutions
    verify             solutions score 100% and are stable, stubs score 0, hints and points exist
    batch              a class graded in parallel: per-student reports, gradebook, similar
                       pairs, class summary (its logic in grader.classroom)
    export             a graded class's gradebook in Canvas's or Moodle's import CSV
    release            the student repository: exercises, public suites, the grader
    ci-template        a GitHub Actions workflow that grades a pushed submission
    gradescope-bundle  a Gradescope autograder zip (setup.sh, run_autograder)
    notebooks          one Jupyter notebook per lesson file, to work in (and to grade)
    mutate             the suites' strength: mutants of the solutions, graded
    watch              regrade a lesson file on every save, on one warm worker
    hint               the next level of help for a failing check

Support modules: `shared` (the grading options, defined once for `grade` and
the commands, and `UsageError`) and `course` (the course repository the
instructor commands work on: the working folder or `--course PATH`). A command
declares its arguments and calls its feature's functions: `grader.course`
(assign, public, release, ci_template, gradescope_bundle, verify, tree),
`grader.batch` (jobs, grading, cluster, gradebook), `grader.classroom`,
`grader.mutate.campaign`, `grader.watch.session`, `grader.hints`.
"""
