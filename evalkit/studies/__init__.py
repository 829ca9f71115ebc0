"""Studies that join the simulator to the analysis path: figure 11 and the end-to-end demo.

The simulator (:mod:`evalkit.sim`) only produces session tables; everything after that goes
through the same path a user's own traces take (:mod:`evalkit.budget`, :mod:`evalkit.stats`,
:mod:`evalkit.report`).
"""

from evalkit.studies.fig11 import (
    SYSTEMS,
    Figure11Config,
    Figure11Result,
    figure11,
    plot_figure11,
    simulate_systems,
)
from evalkit.studies.fig11_claims import (
    best_of_n_null,
    figure11_claims,
    figure11_reproduction,
    write_figure11_reproduction,
)

__all__ = [
    "SYSTEMS",
    "Figure11Config",
    "Figure11Result",
    "figure11",
    "figure11_claims",
    "figure11_reproduction",
    "write_figure11_reproduction",
    "plot_figure11",
    "simulate_systems",
    "best_of_n_null",
]
