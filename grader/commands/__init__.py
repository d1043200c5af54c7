"""The commands of `grade`, one module per command, registered in `grader.cli.COMMANDS`.

A command only translates: `add_arguments(parser)` declares its arguments and
`run(args) -> int` makes them the one call to its feature, then prints and returns the
exit code (any `grader.errors.GraderError` it raises is exit 2, its message printed). Its `--help` is the module's `__doc__`: the
feature module's docstring, where the behaviour is (`__doc__ = verify.__doc__`).

    assign, verify, release,          grader.course (assign, verify, release,
    ci-template, gradescope-bundle    ci_template, gradescope_bundle)
    batch, export                     grader.batch (run, export)
    mutate                            grader.mutate (campaign.run)
    watch, hint                       grader.watch.session, grader.ladder
    notebooks                         grader.notebooks.from_lesson

`shared`: the options `grade` and the commands share, defined once; `course`: the
course repository the instructor commands work on (`--course PATH`).
"""
