"""Test configuration: headless plotting and reproducible property tests."""

import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

# In CI (CI=true) property tests draw the same examples on every run, so a red run is reproducible.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
