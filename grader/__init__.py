"""An automated grader for the "Introduction to JAX" lesson."""

__version__ = "0.1.0"
