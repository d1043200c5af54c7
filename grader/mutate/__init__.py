"""`grade mutate`: how strong the hidden suites are, measured with mutants of `solutions/`.

    operators.py   the mutation operators (JAX-aware and generic), on libcst trees
    generate.py    mutants of one lesson file: stable ids, diffs, the lax stand-ins they need
    equivalent.py  the committed list of equivalent mutants (`equivalent.toml`) and stale ids
    run.py         grading mutants with the real engine on warm workers, stopping at a kill
    report.py      per-file counts, survivors with their diffs, the table and the JSON

A mutant is a copy of one reference solution with one small defect. It is graded
like a student's file (the judge/sandbox path, at the detected isolation level);
it is *killed* when it scores below full marks (or errors, or times out), and it
*survives* when the suites give it full marks: a blind spot, unless it is listed
in `equivalent.toml` with the reason it behaves exactly like the solution.
"""
