"""What a graded class adds up to, for its instructor: pure functions of the students'
results JSON (and, for similarity, their lesson files), used by `grade batch` and
`grade export` (`grader/commands/`, thin layers over these).

    roster          the class as `grade batch` left it in OUT/students/ (one `Student` each)
    spreadsheet     CSV cells that never open as formulas
    lms             the gradebook in Canvas's and Moodle's import CSV formats
    misconceptions  failures grouped by check and cause across students; work not started
    similarity      pairs of students whose files of a lesson are alike (winnowing, as MOSS)
"""
