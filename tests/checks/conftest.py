"""The check kinds are tested against real JAX on the CPU: real tracing, real jaxprs."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
