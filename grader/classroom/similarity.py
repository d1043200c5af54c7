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

A pair's score is the share of the smaller file's fingerprints the other holds,
|A & B| / min(|A|, |B|) (containment): 1.0 for the same code renamed and
recommented, and still 1.0 for a copy padded with hundreds of functions never
called, whose Jaccard index |A & B| / |A | B| (kept as `overlap`) falls to 0.01;
low for independent solutions written differently. A pair is named as suspicious
only when it also shares MIN_SHARED fingerprints: a one-line answer two students
wrote alike (`lax.cond(x > 0, jnp.square, jnp.negative, x)`) is all of a short
file, and no evidence.

What is compared is bounded per file, so a huge file costs what a large one does:
the first MAX_BYTES of it (cut at a line's end), at most MAX_TOKENS tokens, so at
most MAX_TOKENS fingerprints; a pair costs a set intersection of those. Files the
grader refuses (over the size limit, links) are not compared at all
(`grader.batch.pool.similar_pairs`). The price: a copy placed after MAX_BYTES of
padding is not seen (a lesson file that large is 27 times the longest solution).

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

from grader.sandbox import decoding

K = 8  # tokens per k-gram
WINDOW = 4  # hashes per winnowing window: any shared run of K + WINDOW - 1 = 11 tokens is found
COMMON_SHARE = 0.5  # a fingerprint in more than this share of the class is everyone's code
MIN_FINGERPRINTS = 4  # a file with fewer fingerprints left is too small to compare
REPORTED = 0.3  # pairs at or above this score go to similarity.csv
SUSPICIOUS = 0.6  # ... and at or above this one are named in the summary,
MIN_SHARED = 16  # ... when they share this many (about 60 tokens of code of their own)
MAX_BYTES = 200_000  # what is read of a lesson file: 27 times the longest solution (7 kB)
MAX_TOKENS = 50_000  # what is tokenized of it (the solutions have 100 to 900 tokens)

_FSTRING_START = getattr(token, "FSTRING_START", -1)  # Python 3.12: an f-string is tokens
_FSTRING_REST = (getattr(token, "FSTRING_MIDDLE", -1), getattr(token, "FSTRING_END", -1))
_SKIPPED = {
    token.COMMENT,
    token.NL,
    token.ENCODING,
    token.ENDMARKER,
    token.TYPE_COMMENT,
}


def tokens(source: str, limit: int = MAX_TOKENS) -> list[str]:
    """The normalised token stream of Python `source`, at most `limit` tokens (what
    tokenizes before an error or the limit; a file cut at the read cap still counts)."""
    out: list[str] = []
    previous = ""
    statement_start = True  # the next token starts a logical line
    pending = False  # a string opened a statement: a docstring if a NEWLINE follows
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if len(out) >= limit:
                break
            if tok.type in _SKIPPED:
                continue
            if pending:
                pending = False
                if tok.type == token.NEWLINE:  # the docstring and its NEWLINE: dropped
                    continue
                out.append("S")
                statement_start, previous = False, '""'
            if tok.type in (token.NEWLINE, token.INDENT, token.DEDENT):
                out.append({token.NEWLINE: ";", token.INDENT: "{", token.DEDENT: "}"}[tok.type])
                statement_start = True
                previous = ""
                continue
            if tok.type == token.STRING or tok.type == _FSTRING_START:
                if statement_start:
                    pending = True
                    continue
                out.append("S")
            elif tok.type in _FSTRING_REST:
                pass  # an f-string is one `S`
            elif tok.type == token.NAME:
                keep = keyword.iskeyword(tok.string) or previous == "."
                out.append(tok.string if keep else "N")
            else:
                out.append(tok.string)
            statement_start = False
            previous = tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # what came before the error is compared
    if pending:
        out.append("S")
    return out[:limit]


def source_of(path: Path, cap: int = MAX_BYTES) -> str:
    """The Python of a lesson file, at most its first `cap` bytes (cut at a line's end):
    a `.py` decoded as Python decodes it (`grader.sandbox.decoding`; undecodable bytes
    replaced), a notebook's code cells in order (IPython syntax neutralised); empty when
    it cannot be read."""
    try:
        if path.suffix == ".ipynb":
            from grader.notebooks import source

            code = "\n".join(cell.code for cell in source.read(path).code_cells)
            return _cut(code.encode("utf-8", errors="replace"), cap).decode(
                "utf-8", errors="replace"
            )
        with path.open("rb") as fh:
            data = _cut(fh.read(cap + 1), cap)
        try:
            return decoding.text(data, path.name)
        except SyntaxError:  # graded as Python's error; compared as far as it reads
            return data.decode("utf-8", errors="replace")
    except Exception:  # a broken file is graded (and reported) elsewhere; here it is empty
        return ""


def _cut(data: bytes, cap: int) -> bytes:
    """`data`, or its first `cap` bytes up to the end of their last whole line."""
    if len(data) <= cap:
        return data
    head = data[:cap]
    end = head.rfind(b"\n")
    return head[: end + 1] if end >= 0 else head


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
    score: float  # share of the smaller file's fingerprints the other holds (stub, common out)
    shared: int  # fingerprints both files have
    first_size: int  # fingerprints of each file
    second_size: int
    overlap: float = 0.0  # Jaccard index: shared over all of the pair's (a padded copy: low)

    @property
    def suspicious(self) -> bool:
        """Alike enough, on enough code of their own, to be named (summary, terminal)."""
        return self.score >= SUSPICIOUS and self.shared >= MIN_SHARED


def compare(
    files: Mapping[str, Mapping[str, str]],
    stubs: Mapping[str, str] | None = None,
    floor: float = REPORTED,
) -> list[Pair]:
    """Every pair of students whose file of the same lesson scores at least `floor`, the
    suspicious first, then the most alike. `files`: student -> lesson -> source; `stubs`:
    lesson -> the stub's source."""
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
    return sorted(
        pairs,
        key=lambda p: (not p.suspicious, -p.score, -p.shared, p.lesson, p.first, p.second),
    )


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
        score = shared / min(len(fa), len(fb))
        if score >= floor and shared:
            overlap = round(shared / len(fa | fb), 3)
            yield Pair(lesson, a, b, round(score, 3), shared, len(fa), len(fb), overlap)
