"""Agent metrics the field reports: METR's time horizon, cost and efficiency, cost-accuracy
frontiers, and completion x quality.

Exports load on first use (PEP 562), so that ``import evalkit.metrics`` stays light.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "LogisticFit": "_logistic",
    "fit_penalised_logistic": "_logistic",
    "read_horizon_runs": "_read",
    "read_minutes": "_read",
    "read_run_table": "_read",
    "CompletionChange": "completion",
    "completed_mask": "completion",
    "completion_change": "completion",
    "completion_quality": "completion",
    "shapley_split": "completion",
    "EfficiencyResult": "cost",
    "apply_prices": "cost",
    "efficiency": "cost",
    "read_prices": "cost",
    "usage_table": "cost",
    "FrontierResult": "_frontier",  # the function frontier() would be shadowed by a module of that name
    "frontier": "_frontier",  # the function frontier() would be shadowed by a module of that name
    "hal_frontier": "_frontier",  # the function frontier() would be shadowed by a module of that name
    "pareto_set": "_frontier",  # the function frontier() would be shadowed by a module of that name
    "DoublingTime": "horizon",
    "HorizonResult": "horizon",
    "doubling_time": "horizon",
    "hierarchical_resample": "horizon",
    "task_weights": "horizon",
    "time_horizon": "horizon",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from evalkit.metrics._frontier import FrontierResult, frontier, hal_frontier, pareto_set
    from evalkit.metrics._logistic import LogisticFit, fit_penalised_logistic
    from evalkit.metrics._read import read_horizon_runs, read_minutes, read_run_table
    from evalkit.metrics.completion import (
        CompletionChange,
        completed_mask,
        completion_change,
        completion_quality,
        shapley_split,
    )
    from evalkit.metrics.cost import (
        EfficiencyResult,
        apply_prices,
        efficiency,
        read_prices,
        usage_table,
    )
    from evalkit.metrics.horizon import (
        DoublingTime,
        HorizonResult,
        doubling_time,
        hierarchical_resample,
        task_weights,
        time_horizon,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "time_horizon", "HorizonResult", "DoublingTime", "doubling_time", "hierarchical_resample", "task_weights",
    "fit_penalised_logistic", "LogisticFit", "read_horizon_runs", "read_minutes", "read_run_table",
    "efficiency", "EfficiencyResult", "usage_table", "read_prices", "apply_prices",
    "frontier", "FrontierResult", "hal_frontier", "pareto_set",
    "completion_quality", "completion_change", "CompletionChange", "shapley_split", "completed_mask",
]
