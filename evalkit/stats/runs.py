"""Compare runs of several systems on shared tasks: paired differences with clustered SEs, the
right paired test, Holm over the pairs, unmatched tasks listed.

Following Miller (2024), *Adding Error Bars to Evals*: the unit is the task. Each system's
runs of a task are averaged (several runs shrink the within-task noise), the pair is compared
through the per-task differences ``d_t = mean_a,t - mean_b,t`` on the tasks both systems ran,
and the SE of their mean is the CLT SE over tasks or, when tasks share a cluster (a task
family, a shared prompt or repository), the cluster-robust CR1 SE with ``G - 1`` df
(:func:`evalkit.stats.paired_difference`; equal to statsmodels ``OLS(d, 1).fit(cov_type="cluster")``).

The test follows the data (``test="auto"``):

* one pass/fail run per task and system, no clusters: **McNemar's exact test** on the
  discordant tasks;
* otherwise (several runs, continuous scores or clusters): the **sign-flip permutation
  test** of the mean difference, flipping whole clusters when clusters are given (exact up to
  2**n <= ``n_resamples`` sign vectors); ``test="bootstrap"`` gives the paired bootstrap.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from evalkit._rng import RNGLike
from evalkit.stats._result import TestResult
from evalkit.stats.means import paired_difference
from evalkit.stats.multiplicity import MultiplicityResult, adjust_pvalues
from evalkit.stats.paired import mcnemar_test, paired_bootstrap, permutation_test
from evalkit.stats.scores import PairedScores, paired_scores

__all__ = ["RUN_TESTS", "RunComparison", "task_means", "compare_runs", "grouped_tasks_warning"]

RUN_TESTS = ("auto", "mcnemar", "permutation", "bootstrap")


def task_means(outcomes: pd.DataFrame, *, cluster: str | None = None) -> pd.DataFrame:
    """Mean score and number of runs per (system, task), with the task's cluster label.

    Raises
    ------
    ValueError
        If a task's cluster label differs between rows (a task belongs to one cluster).
    """
    need = ["system", "task", "score"] + ([cluster] if cluster else [])
    missing = [c for c in need if c not in outcomes.columns]
    if missing:
        hint = " (--cluster names a column or a sample metadata field)" if cluster in missing else ""
        raise ValueError(f"The outcomes lack the column(s) {missing}{hint}; they have {list(outcomes.columns)}.")
    frame = outcomes[need].copy()
    frame["system"] = frame["system"].astype(str)
    frame["task"] = frame["task"].astype(str)
    g = frame.groupby(["system", "task"], sort=True)
    out = g["score"].agg(score="mean", runs="size").reset_index()
    if cluster:
        if frame[cluster].isna().any():
            bad = frame.loc[frame[cluster].isna(), "task"].iloc[0]
            raise ValueError(f"The cluster column {cluster!r} is missing for {int(frame[cluster].isna().sum())} rows "
                             f"(first: task {bad!r}); every task needs a cluster.")
        labels = frame.groupby("task")[cluster].agg(lambda s: s.astype(str).unique().tolist())
        multi = labels[labels.map(len) > 1]
        if len(multi):
            raise ValueError(f"Task {multi.index[0]!r} has several values of the cluster column {cluster!r} "
                             f"({multi.iloc[0]}); a task must belong to one cluster.")
        out["cluster"] = out["task"].map(labels.map(lambda v: v[0]))
    return out


@dataclass(frozen=True)
class RunComparison:
    """Pairwise comparisons of systems over shared tasks.

    Attributes
    ----------
    table : DataFrame
        One row per pair: ``a, b, n_tasks, only_a, only_b, runs_a, runs_b, mean_a, mean_b,
        diff, se, df, ci_low, ci_high, se_method, correlation, test, statistic, pvalue,
        pvalue_adjusted, reject`` and, for McNemar, ``a_only_pass`` and ``b_only_pass``.
    unmatched : dict
        ``(a, b) -> (tasks only a ran, tasks only b ran)``.
    multiplicity : MultiplicityResult or None
        The correction over the tested pairs.
    results : dict
        ``(a, b) -> TestResult`` of each pair's test.
    cluster : str or None
    """

    table: pd.DataFrame
    unmatched: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]]
    multiplicity: MultiplicityResult | None
    results: dict[tuple[str, str], TestResult]
    cluster: str | None

    @property
    def unmatched_report(self) -> str:
        """One line per pair with unmatched tasks (count and the first few), or that there are none."""
        lines = []
        for (a, b), (oa, ob) in self.unmatched.items():
            if oa or ob:
                lines.append(f"{a} vs {b}: {len(oa)} task(s) only {a} ran ({', '.join(oa[:5])}"
                             f"{' ...' if len(oa) > 5 else ''}), {len(ob)} only {b} ran ({', '.join(ob[:5])}"
                             f"{' ...' if len(ob) > 5 else ''}); left out of that pair's comparison.")
        return " ".join(lines) if lines else "Every task was run by both systems of each pair: no unmatched tasks."


def _pairs(systems: Sequence[str], pairs: str | Sequence[tuple[str, str]], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is not None:
        if baseline not in systems:
            raise ValueError(f"The baseline {baseline!r} is not one of the systems {list(systems)}.")
        return [(s, baseline) for s in systems if s != baseline]
    if pairs == "all":
        return list(combinations(systems, 2))
    out = [tuple(p) for p in pairs]
    unknown = sorted({s for p in out for s in p} - set(systems))
    if unknown:
        raise ValueError(f"pairs name {unknown}, which are not systems of the outcomes {list(systems)}.")
    return out  # type: ignore[return-value]


def _pair_test(d_frame: pd.DataFrame, test: str, single_binary: bool, has_cluster: bool,
               n_resamples: int, rng: RNGLike) -> TestResult:
    d = (d_frame["a"] - d_frame["b"]).to_numpy()
    if test == "auto":
        test = "mcnemar" if single_binary and not has_cluster else "permutation"
    if test == "mcnemar":
        if has_cluster:
            raise ValueError("McNemar's test treats tasks as independent pairs; with clustered tasks use the "
                             "permutation test, which flips whole clusters.")
        if not single_binary:
            raise ValueError("McNemar's test needs one pass/fail (0/1) run per task and system; these tasks have "
                             "several runs or non-binary scores. Use the permutation or bootstrap test.")
        return mcnemar_test(d_frame["a"].to_numpy(), d_frame["b"].to_numpy())
    if has_cluster:
        d = d_frame.assign(d=d).groupby("cluster", sort=True)["d"].sum().to_numpy()
    if test == "permutation":
        return permutation_test(d, n_resamples=n_resamples, rng=rng)
    return paired_bootstrap(d, n_resamples=n_resamples, rng=rng)


#: Namespace separators of task ids ("django/1234", "swe:astropy-12907", "django__django-11099") and the
#: ``--cluster-regex`` that captures the prefix before each.
_PREFIXES = (("/", r"^([^/]+)/"), (":", r"^([^:]+):"), ("__", r"^(.+?)__"))


def grouped_tasks_warning(tasks: Sequence[str] | pd.Series) -> str | None:
    """A warning text when, with no cluster given, the task ids fall into groups by a namespace prefix.

    Tasks of one group (a repository, a family) often share a system effect; tested as independent,
    the paired test over tasks then rejects 12-18 % of the time under the null instead of 5 %
    (``scripts/coverage.py``, "sign-flip permutation over tasks, no --cluster"). The groups are the
    text before the first ``/``, ``:`` or ``__`` of every id, when that gives at least two groups and
    some group holds two or more tasks. ``None`` otherwise.
    """
    ids = pd.Series(pd.unique(np.asarray(tasks).astype(str)))
    for sep, regex in _PREFIXES:
        prefix = ids.str.extract(regex, expand=False)
        if prefix.isna().any():
            continue
        sizes = prefix.value_counts()
        if 2 <= len(sizes) < len(ids):
            shown = ", ".join(repr(str(g)) for g in sizes.index[:3]) + (", ..." if len(sizes) > 3 else "")
            return (f"The {len(ids)} task ids fall into {len(sizes)} groups by their prefix before {sep!r} "
                    f"({shown}) and no cluster is given: if tasks of one group share a system effect, the test "
                    "over tasks taken as independent rejects 12-18 % of the time under the null instead of 5 % "
                    f"(evalkit's coverage study); pass --cluster-regex '{regex}' (cluster= in the API) to test "
                    "over groups, or ignore this if the groups share nothing.")
    return None


def compare_runs(
    outcomes: pd.DataFrame, *, pairs: str | Sequence[tuple[str, str]] = "all", baseline: str | None = None,
    cluster: str | None = None, test: str = "auto", adjust: str = "holm", alpha: float = 0.05,
    confidence_level: float = 0.95, n_resamples: int = 9999, rng: RNGLike = 0,
) -> RunComparison:
    """Paired comparison of every pair of systems over the tasks both ran.

    Parameters
    ----------
    outcomes : DataFrame
        One row per (system, task, run) with ``score`` (and the ``cluster`` column if given).
    pairs : "all" or list of (a, b)
        Pairs to compare (differences a - b).
    baseline : str, optional
        Compare every other system with this one instead.
    cluster : str, optional
        Column naming each task's cluster: CR1 SE with G - 1 df, cluster-level sign flips.
    test : {"auto", "mcnemar", "permutation", "bootstrap"}
        See the module docstring.
    adjust : {"holm", "bh", "bonferroni", "none"}
        Multiplicity correction over the tested pairs.
    alpha, confidence_level : float
    n_resamples : int
        Sign vectors (permutation) or resamples (bootstrap).
    rng : int or Generator

    Returns
    -------
    RunComparison
    """
    if test not in RUN_TESTS:
        raise ValueError(f"test must be one of {RUN_TESTS}; got {test!r}.")
    means = task_means(outcomes, cluster=cluster)
    if cluster is None and (note := grouped_tasks_warning(means["task"])) is not None:
        warnings.warn(note, UserWarning, stacklevel=2)
    systems = sorted(means["system"].unique())
    if len(systems) < 2:
        raise ValueError(f"A comparison needs at least two systems; the outcomes have {systems}.")
    binary = bool(pd.to_numeric(outcomes["score"], errors="coerce").isin([0.0, 1.0]).all())
    rows, results, unmatched = [], {}, {}
    for a, b in _pairs(systems, pairs, baseline):
        ps = paired_scores(means, a, b, system="system", item="task", score="score")
        unmatched[(a, b)] = (tuple(ps.only_a), tuple(ps.only_b))
        row, res = _run_pair_row(means, ps, a, b, binary=binary, cluster=cluster, test=test,
                                 confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
        if res is not None:
            results[(a, b)] = res
        rows.append(row)
    table = pd.DataFrame(rows)
    tested = table["pvalue"].notna()
    mult = None
    if tested.any():
        names = [f"{a} vs {b}" for a, b in zip(table.loc[tested, "a"], table.loc[tested, "b"], strict=True)]
        mult = adjust_pvalues(table.loc[tested, "pvalue"].to_numpy(), method=adjust, alpha=alpha, names=names,
                              family="paired run comparisons over shared tasks")
        table.loc[tested, "pvalue_adjusted"] = mult.adjusted
        table.loc[tested, "reject"] = mult.reject
    return RunComparison(table=table, unmatched=unmatched, multiplicity=mult, results=results, cluster=cluster)


def _run_pair_row(
    means: pd.DataFrame, ps: PairedScores, a: str, b: str, *, binary: bool, cluster: str | None, test: str,
    confidence_level: float, n_resamples: int, rng: RNGLike,
) -> tuple[dict[str, object], TestResult | None]:
    """One row of the table (tasks, runs, means, difference with its SE, the test) and the test result.

    A ValueError of the estimate or the test (too few tasks, zero variance, no discordant pair) becomes
    the row's ``note`` with ``pvalue`` NaN and no result, so the other pairs are kept.
    """
    shared = ps.frame.rename(columns={"item": "task"})
    runs = means.set_index(["system", "task"])["runs"]
    ra = runs.loc[a].reindex(shared["task"]).to_numpy()
    rb = runs.loc[b].reindex(shared["task"]).to_numpy()
    row: dict[str, object] = {
        "a": a, "b": b, "n_tasks": len(shared), "only_a": len(ps.only_a), "only_b": len(ps.only_b),
        "runs_a": float(ra.mean()) if ra.size else np.nan, "runs_b": float(rb.mean()) if rb.size else np.nan,
        "mean_a": float(shared["a"].mean()), "mean_b": float(shared["b"].mean())}
    if cluster:
        shared["cluster"] = shared["task"].map(means.drop_duplicates("task").set_index("task")["cluster"])
    try:
        est = paired_difference(shared["a"], shared["b"],
                                clusters=shared["cluster"] if cluster else None, confidence_level=confidence_level)
        lo, hi = est.confidence_interval()
        row.update(diff=est.estimate, se=est.se, df=est.df, ci_low=lo, ci_high=hi,
                   se_method=f"CR1 clustered by {cluster} ({int(shared['cluster'].nunique())} clusters)" if cluster
                   else "CLT over tasks", correlation=est.details["correlation"])
        single = binary and bool((ra == 1).all() and (rb == 1).all())
        res = _pair_test(shared, test, single, bool(cluster), n_resamples, rng)
    except ValueError as exc:  # too few tasks, zero variance, no discordant pair: say so, keep the others
        row.update(diff=float(shared["a"].mean() - shared["b"].mean()) if len(shared) else np.nan,
                   pvalue=np.nan, note=str(exc))
        return row, None
    row.update(test=res.method, statistic=res.statistic, pvalue=res.pvalue, note="")
    if "b" in res.details:
        row.update(a_only_pass=res.details["b"], b_only_pass=res.details["c"])
    return row, res
