"""Shared test setup: the hypothesis profile.

On CI (environment variable CI == "true") hypothesis derandomizes, so a run is reproducible from
the commit alone; locally the default profile keeps exploring new examples from run to run.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")
