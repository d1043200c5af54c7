"""The course an instructor writes, and what is built from it: the instructor commands'
logic (`grader/commands/` declares their arguments and calls these).

    assign             the student stubs, generated from the marked solutions
    public_suite       a suite's public part: its hidden checks cut out
    release            the student repository
    ci_template        the GitHub Actions workflow that grades a push
    gradescope_bundle  the Gradescope autograder zip
    uploads            a Gradescope upload's files matched to the lesson files (run_autograder)
    lock               requirements.lock: the grading environment, pinned, made offline
    verify             what is wrong with a course before students see it
    tree               the installed grader's own files, copied into a release or a bundle
"""
