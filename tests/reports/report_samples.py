"""Hand-built Reports covering every status the reports must show.

`sample_report()` has one exercise per exercise status (passed, failed with a
location and hint, error before any check ran, not attempted, skipped) plus a
passed exercise with a real matplotlib PNG and metrics. Student-controlled text
carries markup (`<script>`), control characters and non-ASCII on purpose.

`hostile_report()` puts hostile text in every field a submission controls
(messages, captured output, its own source line, notebook notes, artifact
titles, metric names) and has hidden checks whose name, message and hint must
never reach a student.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from grader.model import Artifact, CheckResult, ExerciseResult, Report, SourceLine
from grader.sandbox.isolation import Isolation

SCHEMAS = Path(__file__).parent / "schemas"

# The plot's fill: a colour nothing else on the page uses, so the browser test
# can find the decoded image in a screenshot.
PLOT_RGB = (255, 0, 255)

SCRIPT = "<script>alert('pwned')</script>"

SCAN_MESSAGE = (
    "the jaxpr of running_sum(xs)\n"
    "  expected: a scan primitive (one loop body, whatever the length of xs)\n"
    "  observed: 12 add equations and no scan: the Python loop was unrolled\n"
    "  likely cause: a Python `for` loop over a traced array\n"
    f"  fix: carry the running total through jax.lax.scan {SCRIPT}"
)


def plot_png() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 2.5), dpi=100)
    color = tuple(c / 255 for c in PLOT_RGB)
    ax.bar(["eager", "jit"], [3.0, 1.0], color=[color, color])
    ax.set_title("step time (ms)")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def check(
    name: str,
    status: str = "passed",
    score: float | None = None,
    max_score: float = 2.0,
    **kwargs: object,
) -> CheckResult:
    fields: dict[str, object] = {
        "id": "test_" + "_".join(re.findall(r"[a-z0-9]+", name.lower())),
        "visibility": "public",
        "message": "",
        "hint": "",
        "duration_s": 0.0123,
    }
    fields.update(kwargs)
    return CheckResult(
        name=name,
        status=status,  # type: ignore[arg-type]
        score=max_score if score is None and status == "passed" else (score or 0.0),
        max_score=max_score,
        **fields,  # type: ignore[arg-type]
    )


def sample_report() -> Report:
    arrays = ExerciseResult(
        name="01_arrays",
        title="jax.numpy and immutability",
        status="passed",
        checks=(
            check("set_element returns a new array", hint="Is x still the same after the call?"),
            check("add_at accumulates repeated indices", max_score=3.0),
            check("standardize is jittable", max_score=1.0, visibility="hidden"),
        ),
        duration_s=1.234,
    )
    jit = ExerciseResult(
        name="03_jit",
        title="jit and structured control flow",
        status="failed",
        checks=(
            check("piecewise uses lax.cond", max_score=2.0),
            check(
                "running_sum uses lax.scan",
                status="failed",
                max_score=2.0,
                message=SCAN_MESSAGE,
                hint="How does jax.lax.scan carry a value from one step to the next?",
                location=SourceLine(
                    path="03_jit.py", line=14, code="    for x in xs:  # <b>loop</b>"
                ),
            ),
            check(
                "newton_sqrt converges for a in [1e-2, 1e4]",
                status="failed",
                score=1.5,
                max_score=3.0,
                message="newton_sqrt(a) for 8 values of a\n  expected: within 1e-5 of sqrt(a)\n  observed: 4 of 8 within tolerance (a ≥ 1e3 did not converge)",
                hint="Does your starting guess work for large a?",
            ),
            check(
                "newton_sqrt traces once",
                status="timeout",
                max_score=1.0,
                message="the check did not finish within 60 s",
                hint="Is n_iters static?",
                visibility="hidden",
            ),
        ),
        output="iteration 0\x00\x1b[31m red <b>bold</b>\nüñí done\n",
        duration_s=2.5,
    )
    import_error = (
        "04_vmap.py could not be imported:\n  SyntaxError: invalid syntax (04_vmap.py, line 7)"
    )
    vmap = ExerciseResult(
        name="04_vmap",
        title="automatic vectorization",
        status="error",
        checks=(
            check(
                "batched_dot matches a loop",
                status="error",
                message=import_error,
                hint="What does vmap's in_axes say about each argument?",
                location=SourceLine(path="04_vmap.py", line=7, code="def batched_dot(a, b)"),
            ),
            check(
                "batched_dot traces once",
                status="error",
                message="not run: 04_vmap.py does not import",
                hint="Is the batch a Python loop?",
            ),
        ),
        message=import_error,
        duration_s=0.4,
    )
    random = ExerciseResult(
        name="06_random",
        title="explicit PRNG keys",
        status="not_attempted",
        checks=(
            check(
                "split_keys returns independent keys",
                status="failed",
                message="split_keys is not implemented yet (NotImplementedError: TODO)",
                hint="What does jax.random.split return?",
            ),
            check(
                "dropout uses its key",
                status="failed",
                message="dropout is not implemented yet (NotImplementedError: TODO)",
            ),
        ),
        message=(
            "Not attempted yet: the functions in 06_random.py still raise "
            "NotImplementedError. Start with the first TODO."
        ),
    )
    frameworks = ExerciseResult(
        name="11_frameworks",
        title="the same MLP in Flax and Equinox",
        status="skipped",
        checks=(
            check(
                "flax MLP matches", status="skipped", max_score=0.0, message="flax is not installed"
            ),
        ),
        message="flax is not installed",
    )
    speedup = ExerciseResult(
        name="ex4_jit_speedup",
        title="measuring a jit speedup",
        status="passed",
        checks=(check("speedup is measured after warm-up", max_score=4.0),),
        artifacts=(
            Artifact(title="Step time, eager vs jit", media_type="image/png", data=plot_png()),
        ),
        metrics=(("eager_ms", 3.04219), ("jit_ms", 1.0), ("speedup", 3.04219)),
        duration_s=4.0,
    )
    return Report(
        exercises=(arrays, jit, vmap, random, frameworks, speedup),
        seed=1234,
        submission="exercises",
        grader_version="0.1.0",
        duration_s=9.87,
        isolation=Isolation("user", ("namespaces (unshare is not permitted: no CAP_SYS_ADMIN)",)),
    )


# What a hostile submission prints or raises: colours, a terminal retitle and a
# hidden hyperlink (OSC), a carriage return and backspaces that overwrite, a
# bell, NUL, a C1 CSI that clears the screen, a bidi override.
ESCAPES = (
    "\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b]8;;x\x1b\\link\x1b]8;;\x1b\\"
    " \rOVERWRITE back\x08\x08 bell\x07 nul\x00 csi\x9b2J rlo\u202eevil"
)
MARKUP = '<script>alert(1)</script> "><img src=x onerror=alert(1)>'
HOSTILE = f"{MARKUP}\n{ESCAPES}"

SECRET_NAME = "the secret hidden check"
SECRET_MESSAGE = "secret hidden message: observed 41 for the hidden input 99"
SECRET_HINT = "secret hidden hint: think about 99"
SECRET_SIBLING = "the other secret hidden check"


def hostile_report() -> Report:
    """Hostile text everywhere a submission reaches, and hidden checks to keep secret."""
    hidden = check(
        SECRET_NAME,
        status="failed",
        max_score=3.0,
        message=SECRET_MESSAGE,
        hint=SECRET_HINT,
        visibility="hidden",
        location=SourceLine(path="03_jit.py", line=3, code="return 41  # secret-line"),
    )
    jit = ExerciseResult(
        name="03_jit",
        title="jit and structured control flow",
        status="failed",
        checks=(
            check(
                "running_sum uses lax.scan",
                status="failed",
                message=HOSTILE,
                hint="How does jax.lax.scan carry a value?",
                location=SourceLine(path="03_jit.py", line=14, code=HOSTILE),
            ),
            hidden,
            check("piecewise uses lax.cond"),
        ),
        output=HOSTILE + "\n",
        artifacts=(Artifact(title=HOSTILE, media_type="image/png", data=plot_png()),),
        metrics=((HOSTILE, 1.0),),
        duration_s=1.0,
    )
    # An exercise-level message that tells of a hidden check (the way the runner
    # words "could not finish"), plus a notebook's notes written by the student.
    sibling = check(
        SECRET_SIBLING,
        status="error",
        message="secret sibling message",
        hint="secret sibling hint",
        visibility="hidden",
    )
    vmap = ExerciseResult(
        name="04_vmap",
        title="automatic vectorization",
        status="error",
        checks=(check("batched_dot matches a loop", max_score=1.0), sibling),
        message=(
            f"`{sibling.name}` could not finish: {sibling.message}\n\n"
            f"cell 3 (notebook notes): {HOSTILE}"
        ),
        duration_s=1.0,
    )
    return Report(
        exercises=(jit, vmap),
        seed=7,
        submission="exercises",
        grader_version="0.1.0",
        duration_s=2.0,
    )


# -- one root cause, one message ----------------------------------------------------------

LOSS_KEY = "TypeError|08_mlp.py|54|loss_fn"
LOSS_LINE = SourceLine(
    path="08_mlp.py", line=54, code="return -jnp.mean(jnp.sum(onehot * logp, axis=-1))"
)
LOSS_MESSAGE = (  # as grader.plugin and grader.explain write it
    "your code raised TypeError: mul got incompatible shapes for broadcasting: (4, 10), (4, 3).\n"
    "  likely cause: the two sides of `*` at line 54 have shapes (4, 10) and (4, 3): on the last "
    "axis they have sizes 10 and 3, which differ and neither is 1, so they do not broadcast "
    "(shapes are matched from the last axis: each pair of sizes must be equal, or one of them 1)\n"
    "  fix: print the shapes of both sides (`x.shape`) and make them agree"
)
GATE_MESSAGE = (
    "values are wrong: fix them first (see `{}`); this check is judged once they are right"
)


def _gated(name: str, waits_for: str, max_score: float = 1.0) -> CheckResult:
    return check(
        name,
        status="failed",
        max_score=max_score,
        message=GATE_MESSAGE.format(waits_for),
        hint="a hint nobody needs yet",
        blocked_by=waits_for,
    )


def grouped_report() -> Report:
    """08_mlp whose `loss_fn` raises at line 54: four checks fail with that one error (one
    root cause), two checks wait for them (gated on a value check of the group), and an
    unrelated value check fails with one check waiting for it."""
    mlp = ExerciseResult(
        name="08_mlp",
        title="a small MLP, trained",
        status="failed",
        checks=(
            check("init_params gives the layer shapes", max_score=2.0),
            check(
                "loss_fn matches the reference",
                status="failed",
                message=LOSS_MESSAGE,
                hint="How many classes do the logits have?",
                location=LOSS_LINE,
                root_cause=LOSS_KEY,
            ),
            _gated("loss_fn is pure", "test_loss_fn_matches_the_reference"),
            check(
                "grads match jax.grad of the reference",
                status="failed",
                message=LOSS_MESSAGE,
                hint="grads differentiate loss_fn",
                location=LOSS_LINE,
                root_cause=LOSS_KEY,
            ),
            check(
                "accuracy matches the reference",
                status="failed",
                max_score=1.0,
                message="values of accuracy(params, x, y)\n  expected: 0.75\n  observed: 0.25",
                hint="Which axis holds the classes?",
            ),
            _gated("accuracy compiles under jit", "test_accuracy_matches_the_reference"),
            check(
                "train_step matches the reference",
                status="failed",
                message=LOSS_MESSAGE,
                location=LOSS_LINE,
                root_cause=LOSS_KEY,
            ),
            _gated("train_step compiles once", "test_train_step_matches_the_reference", 2.0),
            check(
                "train lowers the loss",
                status="failed",
                max_score=1.0,
                message=LOSS_MESSAGE,
                location=LOSS_LINE,
                root_cause=LOSS_KEY,
            ),
        ),
        duration_s=3.0,
    )
    return Report(
        exercises=(mlp,), seed=7, submission="exercises", grader_version="0.1.0", duration_s=3.0
    )
