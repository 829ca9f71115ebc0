"""evalkit: statistical evaluation of AI agents.

One call per job, each returning a result with a short ``repr``, ``.summary()`` and
``.to_frame()`` (:mod:`evalkit.api`):

- :func:`rate` -> :class:`Rating`: Bradley-Terry Elo of a judge log, with intervals;
- :func:`compare_runs` -> :class:`Comparison`: agent runs on shared tasks, second minus first;
- :func:`elo_curve` -> :class:`EloCurve`: Elo against budget, and the inflection point;
- :func:`significance_report` -> :class:`Report`: the report folder ``evalkit report`` writes;
- :func:`simulate` -> :class:`Simulation`: seed 000's swarms, as a session table.

Data flows one way: readers (:mod:`evalkit.io`) -> one canonical comparisons table and one
session-trace table -> fits (:mod:`evalkit.ratings`, :mod:`evalkit.budget`) -> tests
(:mod:`evalkit.stats`) -> report and plots. :mod:`evalkit.sim` generates traces that enter
the same path. ``import evalkit`` loads none of them: every name here, and every subpackage,
is imported on first use (PEP 562), so ``import evalkit`` stays light (no pandas, scipy or
matplotlib).

Examples
--------
>>> import evalkit
>>> "compare_runs" in dir(evalkit)
True
"""

from evalkit._lazy import lazy_exports

__version__ = "0.1.0"

_API = ("rate", "Rating", "compare_runs", "Comparison", "elo_curve", "EloCurve", "significance_report", "Report",
        "simulate", "Simulation")
_SUBPACKAGES = ("api", "budget", "engine", "io", "plots", "ratings", "report", "resources", "sim", "stats",
                "studies", "summary")

__all__ = ["__version__", *_API, *_SUBPACKAGES]

__getattr__, __dir__ = lazy_exports(__name__, {**{n: "api" for n in _API}, **{m: "" for m in _SUBPACKAGES}},
                                    globals())
