"""`grade watch`: regrade a lesson file each time it is saved, on one warm worker.

    regrader.py  the warm worker in the background: one grading at a time, the newest save wins;
                 the judge's records read as they come (`preview`, `complete`)
    syntax.py    the syntax check, in the parent, without importing the lesson file
    events.py    saves (watchfiles), keys (`q`) and results as one stream for the command's loop
    display.py   what is drawn after each save: the file's line, its first problem, what next

What a save pays for, and what it does not: JAX is imported once, when the command starts
(the worker, `grader.runner.handle.WorkerHandle`, whose preloaded heap is frozen out of the
collector's way and whose Hypothesis engine is warmed up before any judge is forked); each
save forks a judge and its sandbox, which imports the lesson file and runs the checks. The
session's sandboxes share one compilation cache (`grader.runner.cache.session_dir`), so a
regrading loads the programs the previous one compiled. The verdict is drawn as the records
come (the worker streams them): a file's first failing check as soon as it fails, while the
others still run, and the whole verdict as soon as the judge records that it is done, before
the judge and its sandbox have exited; the worker's reply then has the last word.

The command's arguments are `grader.commands.watch`; its loop, and leaving cleanly,
`session`. What a graded save shows goes through `grader.audience.after_grading`, as `grade`'s summary does: the
course's policy on fixes, what the student revealed, the next step, and `.grade/last.json`
for `grade hint`; each graded save joins the run history (`.grade/history.jsonl`), as a run of
`grade` does.
"""
