"""The reports: each a pure function of a `grader.model.Report`.

- `terminal`   the summary printed after a run, and the runner's progress lines
- `html`       one self-contained page (templates/report.html.j2)
- `json_report` our JSON, `Report.to_json()` (schema: grader/results.schema.json)
- `gradescope` Gradescope's autograder results.json
- `junit`      JUnit XML for CI test reporters
- `labels`     the wording and number formats they share

Every file-writing report has `render(report) -> str` and `write(report, path)`.
"""
