"""evalkit: statistical evaluation of AI agents.

Data flows one way: readers (:mod:`evalkit.io`) -> one canonical comparisons table and one
session-trace table -> fits (:mod:`evalkit.ratings`, :mod:`evalkit.budget`) -> tests
(:mod:`evalkit.stats`) -> report and plots. :mod:`evalkit.sim` generates traces that enter
the same path.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
