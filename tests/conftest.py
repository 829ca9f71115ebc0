"""Test configuration: headless plotting and reproducible property tests."""

import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

# Property tests draw the same examples on every run (here and in CI), so a red run is reproducible;
# HYPOTHESIS_PROFILE=explore draws fresh random examples to hunt for new failures.
settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True, database=None)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
