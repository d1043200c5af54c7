"""Measure the hidden suites' strength with mutants of the reference solutions (instructors).

    grade mutate [--only NAMES] [--json FILE] [--jobs N] [--limit N] [--fail-under PERCENT]
                 [--course PATH] [--solutions DIR] [--equivalent FILE] [--operators NAMES]
                 [--ids IDS] [--list]

Each lesson file of `--solutions` (default: the course's solutions/) is mutated one
small defect at a time (`grader.mutate.operators`: a lax loop or branch replaced by Python, a key
split dropped or reused, an axis or sign changed, an update or returned state
dropped, jnp replaced by np, static_argnames removed, an off-by-one, ...). Every
mutant is graded with the hidden suites like a student's file, and is killed when
it scores below full marks (or errors, or times out). A survivor is a defect no
check sees, unless `--equivalent` (default grader/mutate/equivalent.toml) lists
it with the reason it behaves like the solution.

Prints every survivor with its diff and a table: file, mutants, killed,
equivalent, survivors, kill rate = killed / (mutants - equivalent).
`--limit N` grades at most N mutants per file (spread over the operators, the same
ones every run); `--ids ID[,ID...]` grades only the mutants with these ids (a survivor's
id, say, after a check was sharpened); `--list` prints the mutants and their ids without
grading (with `--ids`, only those: their diffs).

Exit codes: 0 done (and every file reached --fail-under), 1 a file's kill rate is
below --fail-under, 2 the command could not run.
"""

# The package (instructors only; `grade release` leaves it out):
#   operators.py   the mutation operators (JAX-aware and generic), on libcst trees
#   generate.py    mutants of one lesson file: stable ids, diffs, the lax stand-ins they need
#   equivalent.py  the committed list of equivalent mutants (`equivalent.toml`) and stale ids
#   grade_mutants.py  grading mutants with the real engine on warm workers, stopping at a kill
#   campaign.py    a campaign as `grade mutate` asks for it: the mutants chosen, then graded
#   report.py      per-file counts, survivors with their diffs, the table and the JSON
# This docstring is `grade mutate --help` (`grader/commands/mutate.py`).
