"""Cells of the coverage study (scripts/coverage.py): one module per area, each exposing ``CELLS``."""
