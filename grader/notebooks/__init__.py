"""Jupyter notebooks as lesson files: written from the `.py` lessons, graded like them.

    source     a notebook file read into cells; IPython magics and shell lines
               neutralised into plain Python, line for line
    execution  the cells run in a fresh, bounded Jupyter kernel (nbclient), one
               outcome per cell: ran, raised, timed out, not run; the figures
    module     the lesson module the hidden suites import: the cells that ran,
               in notebook order, compiled as `03_jit.ipynb, cell 4`
    grading_step  the grading child's step before pytest: all of the above,
               with records for the report (notes, figures, unreadable notebooks)
    from_lesson  a `.py` lesson file turned into a notebook (`grade notebooks`), its first
               code cell loading `%grade`

`%grade`, in the student's own kernel (`%load_ext grader`):

    kernel     which lesson, and the cells the kernel ran, written as the module above
               (text only: nothing is run in the kernel)
    magic      the magic: that module graded by the engine on a worker kept warm
    inline     the verdict under the cell: HTML (`notebook.html.j2`), or plain text

Everything else except `from_lesson` runs inside the grading child, behind the isolation
boundary: the parent only copies the notebook's bytes.
"""
