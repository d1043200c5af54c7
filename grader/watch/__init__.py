"""`grade watch`: regrade a lesson file each time it is saved, on one warm worker.

    regrader.py  the warm worker in the background: one grading at a time, the newest save wins
    source.py    the syntax check, in the parent, without importing the lesson file
    events.py    saves (watchfiles) and keys (`q`) as one stream for the command's loop
    screen.py    what is drawn after each save: the file's line, its first problem, what next

The command itself (arguments, the loop, leaving cleanly) is `grader.commands.watch`. What a
graded save shows goes through `grader.hints.after_grading`, as `grade`'s summary does: the
course's policy on fixes, what the student revealed, the next step, and `.grade/last.json`
for `grade hint`.
"""
