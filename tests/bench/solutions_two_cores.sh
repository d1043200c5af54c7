#!/usr/bin/env bash
# `grade solutions` and the floor pinned to 2 cores (taskset -c 0,1), alternating, twice each,
# each timed by /usr/bin/time. Run from the project root with the grader installed (`grade` on
# PATH) and FLOOR naming ../shared/floor16 (default). Results:
# docs/measurements/2026-12-07-solutions-2cores.md.
set -u
FLOOR=${FLOOR:-../shared/floor16}
T() { /usr/bin/time -f "$1: wall %e s, cpu %U+%S s, maxrss %M KB" "${@:2}"; }
taskset -c 0,1 python -c "import os; print('cores seen', len(os.sched_getaffinity(0)))"
for i in 1 2; do
  T "floor$i" taskset -c 0,1 env FLOOR_LESSONS=solutions python -m pytest -q -p no:cacheprovider "$FLOOR" 2>&1 | tail -2
  work=$(mktemp -d); cp -r solutions/. "$work"
  (cd "$work" && T "solutions$i" taskset -c 0,1 grade . --json "$work/out.json" --no-html -q --require-isolation basic 2>&1 | tail -3)
  rm -rf "$work"
done
