"""Score single runs: per system, the mean over tasks with its SE and interval, pass@k / pass^k when
runs repeat, and what the runs spent (tokens, cost, time), with no second system to pair with.

The unit is the task (Miller 2024): each system's runs of a task are averaged first, then

* ``mean`` is the mean over tasks and ``se`` the sample SD of the task means over sqrt(n)
  (ddof = 1). This is Inspect's ``accuracy`` and ``stderr`` (its default ``mean`` epoch
  reducer, then ``np.std(values, ddof=1) / np.sqrt(n)``), lm-evaluation-harness's ``acc`` and
  ``acc_stderr`` (``mean_stderr``: ``sample_stddev / sqrt(n)``) and, for one pass/fail run per
  instance, SWE-bench's resolved rate;
* the interval is **Wilson's** when every task has one pass/fail run (it keeps its coverage
  near 0 and 1, where a t interval does not), the **t(n - 1)** interval otherwise, and the
  cluster-robust **CR1 t(G - 1)** interval over clusters of tasks when ``cluster`` is given
  (:func:`evalkit.stats.mean_se`);
* pass@k and pass^k come from :func:`evalkit.stats.reliability.pass_k_table` when some task
  has two or more pass/fail runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.stats._validate import check_confidence_level
from evalkit.stats.means import mean_se
from evalkit.stats.proportions import wilson_interval

__all__ = ["RunScores", "score_runs", "SPEND_COLUMNS"]

#: What a run spent, summed per system where the logs record it.
SPEND_COLUMNS: tuple[str, ...] = ("tokens", "cost", "time")


@dataclass(frozen=True)
class RunScores:
    """Result of :func:`score_runs`.

    Attributes
    ----------
    table : DataFrame
        One row per system: ``system, n_tasks, runs_per_task, mean, se, ci_low, ci_high,
        interval`` (the method of the interval), ``passes`` (pass/fail runs only), then for
        each of ``tokens, cost, time``: the total over runs, the mean per run of a task
        (``*_per_run``) and ``*_missing`` (runs whose log lacks it).
    pass_k : DataFrame or None
        pass@k / pass^k per system and k (when runs repeat and scores are pass/fail).
    confidence_level : float
    cluster : str or None
    """

    table: pd.DataFrame
    pass_k: pd.DataFrame | None
    confidence_level: float
    cluster: str | None


def _interval(task_means: pd.Series, binary_single: bool, clusters: pd.Series | None,
              level: float) -> dict[str, object]:
    """Mean, SE (sd / sqrt(n), or CR1), interval and its method for one system's task means."""
    x = task_means.to_numpy(dtype=float)
    n = x.size
    mean = float(x.mean())
    se = float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    out: dict[str, object] = {"mean": mean, "se": se}
    if clusters is not None:
        try:
            est = mean_se(x, clusters=clusters.to_numpy(), confidence_level=level)
        except ValueError as exc:
            return {**out, "ci_low": np.nan, "ci_high": np.nan, "interval": f"not computed: {exc}"}
        lo, hi = est.confidence_interval()
        g = int(est.details.get("n_clusters", 0))
        return {**out, "se": est.se, "ci_low": lo, "ci_high": hi, "interval": f"CR1 t({g - 1}), {g} clusters"}
    if binary_single:
        lo, hi = wilson_interval(float(x.sum()), n, confidence_level=level).confidence_interval()
        return {**out, "ci_low": lo, "ci_high": hi, "passes": int(x.sum()), "interval": "Wilson"}
    if n < 2 or se == 0.0:
        why = "a single task" if n < 2 else "zero variance"
        return {**out, "ci_low": np.nan, "ci_high": np.nan, "interval": f"not computed ({why})"}
    est = mean_se(x, confidence_level=level)
    lo, hi = est.confidence_interval()
    return {**out, "ci_low": lo, "ci_high": hi, "interval": f"t({n - 1})"}


def _spend(rows: pd.DataFrame) -> dict[str, object]:
    out: dict[str, object] = {}
    for col in SPEND_COLUMNS:
        if col not in rows.columns:
            continue
        v = pd.to_numeric(rows[col], errors="coerce")
        known = v.notna()
        out[col] = float(v[known].sum()) if known.any() else np.nan
        out[f"{col}_per_run"] = float(v[known].mean()) if known.any() else np.nan
        out[f"{col}_missing"] = int((~known).sum())
    return out


def score_runs(
    outcomes: pd.DataFrame, *, cluster: str | None = None, confidence_level: float = 0.95,
    ks: Sequence[int] | None = None, threshold: float | None = None,
) -> RunScores:
    """Score each system's runs on its own tasks (no pairing).

    Parameters
    ----------
    outcomes : DataFrame
        One row per (system, task, run): ``system, task, score`` and optionally ``session``
        (the run), ``tokens``, ``cost``, ``time`` and the ``cluster`` column.
    cluster : str, optional
        Column naming each task's cluster (a task family, a repository): CR1 SE and t(G - 1).
    confidence_level : float
    ks : sequence of int, optional
        k values of pass@k / pass^k (default 1, 2, 4, ... up to the runs per task).
    threshold : float, optional
        pass@k / pass^k count a run as a pass when its score is >= threshold (default: the
        scores must be 0/1, else pass@k is left out).

    Returns
    -------
    RunScores
    """
    check_confidence_level(confidence_level)
    need = ["system", "task", "score"] + ([cluster] if cluster else [])
    missing = [c for c in need if c not in outcomes.columns]
    if missing:
        hint = " (--cluster names a column or a sample metadata field)" if cluster in missing else ""
        raise ValueError(f"The outcomes lack the column(s) {missing}{hint}; they have {list(outcomes.columns)}.")
    frame = outcomes.copy()
    frame["system"] = frame["system"].astype(str)
    frame["task"] = frame["task"].astype(str)
    score = pd.to_numeric(frame["score"], errors="coerce")
    binary = bool(score.isin([0.0, 1.0]).all())
    rows, any_repeat = [], False
    for system, g in frame.groupby("system", sort=False):
        runs = g.groupby("task", sort=True)["score"]
        means = runs.mean()
        per = runs.size()
        any_repeat |= bool((per > 1).any())
        clusters = None
        if cluster:
            labels = g.groupby("task", sort=True)[cluster].first()
            if labels.isna().any():
                raise ValueError(f"The cluster column {cluster!r} is missing for {int(labels.isna().sum())} task(s) "
                                 f"of {system!r}; every task needs a cluster.")
            clusters = labels.astype(str)
        row: dict[str, object] = {"system": system, "n_tasks": int(means.size), "runs_per_task": float(per.mean())}
        row.update(_interval(means, binary and bool((per == 1).all()), clusters, confidence_level))
        row.update(_spend(g))
        rows.append(row)
    table = pd.DataFrame(rows)
    front = ["system", "n_tasks", "runs_per_task", "mean", "se", "ci_low", "ci_high", "interval"]
    table = table[[c for c in front if c in table] + [c for c in table if c not in front]]
    pass_k = None
    if any_repeat and (binary or threshold is not None):
        from evalkit.stats.reliability import pass_k_table, run_counts

        pass_k = pass_k_table(run_counts(frame, threshold=threshold), ks, confidence_level=confidence_level)
    return RunScores(table=table, pass_k=pass_k, confidence_level=confidence_level, cluster=cluster)
