"""Students whose lesson files are suspiciously alike, the way MOSS finds them.

Each lesson file is read with Python's own tokenizer and normalised, so that
what a copier changes cheaply changes nothing:

    comments, blank lines, line breaks inside brackets    dropped
    docstrings (a string alone as a statement)            dropped
    every name a student chooses (variables, functions,   `N`
      parameters, import aliases)
    strings                                               `S`
    attributes after a dot (`lax.scan`, `.shape`)         kept: the API used is the code's
    keywords, operators, numbers, indentation             kept: its structure

The normalised tokens are cut into k-grams, each hashed (BLAKE2b, so a hash is
the same in every process and on every machine), and *winnowed* (Schleimer,
Wilkerson and Aiken, SIGMOD 2003): of every window of `WINDOW` consecutive
hashes the smallest is kept. Any passage of at least `K + WINDOW - 1` tokens two
files share leaves at least one shared fingerprint; shorter coincidences mostly
do not.

Two kinds of fingerprint are subtracted before students are compared, so that
what was given, or what everybody writes, is not evidence:
- the stub's own (`exercises/<lesson>.py`: the imports, signatures and
  docstrings the lesson hands out);
- those found in more than half of the class (MOSS's `-m`): the one obvious
  line `lax.cond(x > 0, ...)` that every correct solution contains.

A pair's score is the Jaccard index of what remains, |A & B| / |A | B|: 1.0
for the same code renamed and recommented, low for independent solutions
written differently.

Why not a library: `copydetect` (PyPI, the one maintained MOSS-like package)
hashes k-grams with Python's salted `hash()`, so its fingerprints and scores
change from run to run unless PYTHONHASHSEED is fixed (our class reports are
reproducible), tokenizes with Pygments rather than Python's tokenizer, and
pulls in matplotlib and tqdm for its own reports. Winnowing itself is the 20
lines below.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import keyword
import token
import tokenize
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

K = 8  # tokens per k-gram
WINDOW = 4  # hashes per winnowing window: any shared run of K + WINDOW - 1 = 11 tokens is found
COMMON_SHARE = 0.5  # a fingerprint in more than this share of the class is everyone's code
MIN_FINGERPRINTS = 4  # a file with fewer fingerprints left is too small to compare
REPORTED = 0.3  # pairs at or above this score go to similarity.csv
SUSPICIOUS = 0.6  # ... and at or above this one are named in the summary

_SKIPPED = {
    token.COMMENT,
    token.NL,
    token.ENCODING,
    token.ENDMARKER,
    token.TYPE_COMMENT,
}


def tokens(source: str) -> list[str]:
    """The normalised token stream of Python `source` (empty when it does not tokenize)."""
    out: list[str] = []
    previous = ""
    statement_start = True  # the next token starts a logical line
    dropped = False  # a docstring was dropped: drop its NEWLINE too
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    for i, tok in enumerate(raw):
        if tok.type in _SKIPPED:
            continue
        if tok.type == token.NEWLINE and dropped:
            dropped = False
            continue
        if tok.type in (token.NEWLINE, token.INDENT, token.DEDENT):
            out.append({token.NEWLINE: ";", token.INDENT: "{", token.DEDENT: "}"}[tok.type])
            statement_start = True
            previous = ""
            continue
        if tok.type == token.STRING or tok.type == getattr(token, "FSTRING_START", -1):
            nxt = next((t for t in raw[i + 1 :] if t.type not in _SKIPPED), None)
            docstring = statement_start and nxt is not None and nxt.type == token.NEWLINE
            if docstring:
                dropped = True
                continue
            out.append("S")
        elif tok.type in (
            getattr(token, "FSTRING_MIDDLE", -1),
            getattr(token, "FSTRING_END", -1),
        ):
            pass  # an f-string is one `S`
        elif tok.type == token.NAME:
            keep = keyword.iskeyword(tok.string) or previous == "."
            out.append(tok.string if keep else "N")
        else:
            out.append(tok.string)
        statement_start = False
        previous = tok.string
    return out


def source_of(path: Path) -> str:
    """The Python of a lesson file: a `.py` as it is, a notebook's code cells in order
    (IPython syntax neutralised); empty when it cannot be read."""
    try:
        if path.suffix == ".ipynb":
            from grader.notebooks import source

            return "\n".join(cell.code for cell in source.read(path).code_cells)
        return path.read_text(encoding="utf-8", errors="replace")
    except Exception:  # a broken file is graded (and reported) elsewhere; here it is empty
        return ""


def _hash(gram: tuple[str, ...]) -> int:
    digest = hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def fingerprints(source: str, k: int = K, window: int = WINDOW) -> frozenset[int]:
    """The winnowed k-gram hashes of `source`."""
    stream = tokens(source)
    hashes = [_hash(tuple(stream[i : i + k])) for i in range(len(stream) - k + 1)]
    if len(hashes) <= window:
        return frozenset(hashes)
    chosen: set[int] = set()
    for start in range(len(hashes) - window + 1):
        chosen.add(min(hashes[start : start + window]))
    return frozenset(chosen)


@dataclass(frozen=True)
class Pair:
    """Two students' files of one lesson, and how alike they are."""

    lesson: str
    first: str  # the two students, in name order
    second: str
    score: float  # Jaccard index of their fingerprints, stub and class-common ones removed
    shared: int  # fingerprints both files have
    first_size: int  # fingerprints of each file
    second_size: int

    @property
    def suspicious(self) -> bool:
        return self.score >= SUSPICIOUS


def compare(
    files: Mapping[str, Mapping[str, str]],
    stubs: Mapping[str, str] | None = None,
    floor: float = REPORTED,
) -> list[Pair]:
    """Every pair of students whose file of the same lesson scores at least `floor`, the most
    alike first. `files`: student -> lesson -> source; `stubs`: lesson -> the stub's source."""
    stubs = stubs or {}
    lessons = sorted({lesson for by_lesson in files.values() for lesson in by_lesson})
    pairs: list[Pair] = []
    for lesson in lessons:
        given = fingerprints(stubs[lesson]) if lesson in stubs else frozenset()
        prints = {
            student: fingerprints(by_lesson[lesson]) - given
            for student, by_lesson in sorted(files.items())
            if lesson in by_lesson
        }
        prints = _without_common(prints)
        pairs += _pairs(lesson, prints, floor)
    return sorted(pairs, key=lambda p: (-p.score, -p.shared, p.lesson, p.first, p.second))


def _without_common(prints: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Fingerprints found in more than COMMON_SHARE of the files (and in more than two) removed."""
    counts = Counter(h for found in prints.values() for h in found)
    most = max(2, int(COMMON_SHARE * len(prints)))
    common = {h for h, n in counts.items() if n > most}
    return {student: found - common for student, found in prints.items()}


def _pairs(lesson: str, prints: dict[str, frozenset[int]], floor: float) -> Iterable[Pair]:
    for (a, fa), (b, fb) in itertools.combinations(sorted(prints.items()), 2):
        if len(fa) < MIN_FINGERPRINTS or len(fb) < MIN_FINGERPRINTS:
            continue
        shared = len(fa & fb)
        score = shared / len(fa | fb)
        if score >= floor and shared:
            yield Pair(lesson, a, b, round(score, 3), shared, len(fa), len(fb))
