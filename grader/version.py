"""The grader's version: what results, histories and resumable batches record (a grading
made by another version is not mixed with this one's)."""

__version__ = "0.1.0"
