"""The types of command-line values `grade` and `%grade` share: argparse calls them with
the text given and reports their `ArgumentTypeError` as a usage error."""

from __future__ import annotations

import argparse

__all__ = ["percent", "positive", "positive_int"]


def percent(text: str) -> float:
    value = float(text.rstrip("%"))
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("give a percentage of the maximum score, 0 to 100")
    return value


def positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
