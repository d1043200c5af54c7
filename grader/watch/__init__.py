"""`grade watch`: regrade a lesson file each time it is saved, on one warm worker.

    regrader.py  the warm worker in the background: one grading at a time, the newest save wins
    source.py    what the parent reads of a lesson file without importing it (syntax, first TODO)
    events.py    saves (watchfiles) and keys (`q`) as one stream for the command's loop
    screen.py    what is drawn after each save: the file's line, its first problem, what next

The command itself (arguments, the loop, leaving cleanly) is `grader.commands.watch`.
"""
