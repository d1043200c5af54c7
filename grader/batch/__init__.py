"""A class graded at once (`grade batch`) and its gradebook exported (`grade export`).

run        `grade batch`: the students chosen, graded, the class's files rebuilt (its help)
export     `grade export`: the gradebook in an LMS's import CSV (its help)
jobs       one student's grading: what a local or a remote worker needs
pool       the students found, graded on a pool of warm workers, their files written
cluster    the same grading on a dask.distributed cluster (`--scheduler`)
gradebook  the class view rebuilt from the per-student results: gradebook.csv,
           similarity.csv and summary.html (its score histogram drawn as inline SVG)
"""
