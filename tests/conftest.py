"""Test-wide settings: hypothesis runs a fixed, reproducible set of examples in CI."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
